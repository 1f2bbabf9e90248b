"""Driving the scenario page in Chromium: a stored cluster and its scenario, pointer drags,
element boxes and waiting for a change's two swaps (shared by the scenario browser tests)."""

from __future__ import annotations

from scenarios import services as scenario_services
from tests.browser.conftest import USER
from tests.browser.live_server import in_thread
from tests.factories import device, named_slice, node
from tests.scenarios.cluster import documents, store

__all__ = ["three_nodes_two_pods", "new_scenario", "box_of", "drag", "settled"]


def three_nodes_two_pods() -> list[dict]:
    docs = documents(pods=2)
    return docs[:2] + [node("worker-3"), named_slice(
        "worker-3", [device("gpu-0", memory=("quantity", "32Gi"))])] + docs[2:]


def new_scenario(django_user_model, name: str, docs: list[dict] | None = None):
    in_thread(store, docs or three_nodes_two_pods())
    return in_thread(scenario_services.create, django_user_model.objects.get(username=USER),
                     name)


def box_of(locator) -> dict:
    """The element's box, read in the page in one step.

    The scenario body is swapped twice after a change (the htmx answer, then the socket's
    push), so an element found a moment ago may be detached by now, where Playwright's
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


def settled(page, socket, action) -> None:
    """Run ``action`` (a change) and wait for both swaps: the POST's answer, the socket's push."""
    with socket.expect_event("framereceived"), page.expect_response(
            lambda r: r.request.method == "POST"):
        action()
