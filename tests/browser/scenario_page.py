"""Driving the scenario page in Chromium: a stored cluster and its scenario, opening its page,
pointer drags, element boxes and waiting for a change's answer (shared by the scenario
browser tests)."""

from __future__ import annotations

from scenarios import services as scenario_services
from tests.browser.conftest import USER
from tests.browser.live_server import in_thread
from tests.factories import device, named_slice, node
from tests.scenarios.cluster import documents, store

__all__ = ["three_nodes_two_pods", "new_scenario", "open_scenario", "box_of", "drag",
           "settled", "HeldChanges"]


def three_nodes_two_pods() -> list[dict]:
    docs = documents(pods=2)
    return docs[:2] + [node("worker-3"), named_slice(
        "worker-3", [device("gpu-0", memory=("quantity", "32Gi"))])] + docs[2:]


def new_scenario(django_user_model, name: str, docs: list[dict] | None = None):
    in_thread(store, docs or three_nodes_two_pods())
    return in_thread(scenario_services.create, django_user_model.objects.get(username=USER),
                     name)


def open_scenario(page, scenario) -> None:
    """Go to ``scenario``'s page and wait until its socket is open and knows the page, so the
    page's own changes come back once, in the answers (``static/js/scenario.js``)."""
    page.goto(f"/scenarios/{scenario.pk}/")
    page.locator(".scenario[data-page-said]").wait_for(state="attached")


def box_of(locator) -> dict:
    """The element's box, read in the page in one step.

    The scenario body may be swapped at any moment (a push of another page's change, a
    refresh), so an element found a moment ago may be detached by now, where Playwright's
    ``bounding_box()`` answers None; ``evaluate`` waits for the locator to match again.
    """
    return locator.evaluate("e => { const r = e.getBoundingClientRect();"
                            " return {x: r.x, y: r.y, width: r.width, height: r.height}; }")


def drag(page, source, target) -> None:
    """A real pointer drag: press, move in steps, release."""
    start = box_of(source)
    end = box_of(target)
    page.mouse.move(start["x"] + 10, start["y"] + 8)
    page.mouse.down()
    page.mouse.move(start["x"] + 30, start["y"] + 30, steps=4)
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + 20, steps=8)
    page.mouse.up()


class HeldChanges:
    """Holds the page's change requests back until the test lets each one go.

    Playwright runs a route's handler from its own event loop, so the page can already show a
    drop as busy (htmx marks it before the request leaves) while the handler has not run yet:
    ``only()`` pumps that loop until the request has arrived.
    """

    def __init__(self, page) -> None:
        self._page = page
        self._routes: list = []
        page.route("**/changes/", lambda route: self._routes.append(route))

    def only(self):
        """The one held request; fails if none arrives within ten seconds or more did."""
        for _ in range(400):
            if self._routes:
                break
            self._page.wait_for_timeout(25)
        assert len(self._routes) == 1, f"{len(self._routes)} change requests held"
        return self._routes[0]


def settled(page, action) -> None:
    """Run ``action`` (a change) and wait until its answer is swapped in: the page is no
    longer busy (``static/js/scenario.js`` clears ``data-busy`` after the request's swap).
    The page's socket pushes no second body for its own change (``scenarios.consumers``)."""
    with page.expect_response(lambda r: r.request.method == "POST"):
        action()
    page.wait_for_function("document.querySelector('.scenario').dataset.busy === undefined")
