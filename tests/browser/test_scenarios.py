"""What-if scenarios in real Chromium: dragging with the pointer, refusals, isolation.

The pages run on the in-process ASGI server (``asgi_page``), so their WebSockets work.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from scenarios import services as scenario_services
from tests.browser.conftest import USER, log_in
from tests.browser.live_server import in_thread
from tests.factories import device, named_slice, node
from tests.scenarios.cluster import documents, store

pytestmark = pytest.mark.browser


def _three_nodes_two_pods() -> list[dict]:
    docs = documents(pods=2)
    return docs[:2] + [node("worker-3"), named_slice(
        "worker-3", [device("gpu-0", memory=("quantity", "32Gi"))])] + docs[2:]


def _scenario(django_user_model, name: str, docs: list[dict] | None = None):
    in_thread(store, docs or _three_nodes_two_pods())
    return in_thread(scenario_services.create, django_user_model.objects.get(username=USER),
                     name)


def _box(locator) -> dict:
    """The element's box, read in the page in one step.

    The scenario body is swapped twice after a change (the htmx answer, then the socket's
    push), so an element found a moment ago may be detached by now, where Playwright's
    ``bounding_box()`` answers None; ``evaluate`` waits for the locator to match again.
    """
    return locator.evaluate("e => { const r = e.getBoundingClientRect();"
                            " return {x: r.x, y: r.y, width: r.width, height: r.height}; }")


def _drag(page, source, target) -> None:
    """A real pointer drag: press, move in steps, release."""
    start = _box(source)
    end = _box(target)
    page.mouse.move(start["x"] + 10, start["y"] + 8)
    page.mouse.down()
    page.mouse.move(start["x"] + 30, start["y"] + 30, steps=4)
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + 20, steps=8)
    page.mouse.up()


def test_dragging_a_pod_onto_a_node_schedules_it_there_only_in_the_scenario(
        asgi_page, django_user_model):
    page = asgi_page
    scenario = _scenario(django_user_model, "move p0")
    baseline = page.open_another()
    log_in(baseline)
    baseline.goto("/pods/default/p0/")
    # Read once its socket is open: the live status says "connecting…" until then, and a
    # slow machine opens it after the first read.
    expect(baseline.locator(".live")).to_have_attribute("data-socket", "open")
    before = baseline.locator("main").inner_text()
    assert "worker-1" in before

    page.goto(f"/scenarios/{scenario.pk}/")
    pod = page.locator('[data-drag="pod"][data-pod="default/p0"]')
    assert pod.locator("xpath=ancestor::article").get_attribute("data-node") == "worker-1"
    _drag(page, pod, page.locator('article[data-node="worker-3"]'))

    moved = page.locator('article[data-node="worker-3"] [data-pod="default/p0"]')
    moved.wait_for()
    assert "pinned" in moved.inner_text()
    assert "default/p0: worker-1 → worker-3" in page.locator(".outcome").inner_text()
    assert page.locator(".history li").first.inner_text() == "Pin default/p0 to worker-3"

    # The baseline's own page, open in another tab, did not change (and neither did the
    # stored cluster: a reload shows the same).
    assert baseline.locator("main").inner_text() == before
    baseline.reload()
    assert "worker-1" in baseline.locator("main").inner_text()
    assert page.js_errors == [] and baseline.js_errors == []


def test_an_impossible_drop_shows_the_engines_reason(asgi_page, django_user_model):
    page = asgi_page
    scenario = _scenario(django_user_model, "impossible")
    page.goto(f"/scenarios/{scenario.pk}/")

    _drag(page, page.locator('[data-drag="pod"][data-pod="default/p0"]'),
          page.locator('article[data-node="worker-2"]'))

    # The answer is at the drop target, not at the top of the page.
    message = page.locator('article[data-node="worker-2"] [data-refused="true"]')
    message.wait_for()
    assert "default/p0 cannot run on worker-2" in message.inner_text()
    assert "allocated to claim default/p1-gpu" in message.inner_text()
    # Nothing changed: p0 is still on worker-1 and there is no change to undo.
    assert page.locator('article[data-node="worker-1"] [data-pod="default/p0"]').count() == 1
    assert page.get_by_role("button", name="Undo").is_disabled()


def test_dragging_two_nodes_of_a_group_provisions_a_pending_atomic_request(
        asgi_page, django_user_model):
    from tests.allocation.engine.autoscaler.builders import (
        gpu_basics,
        node_group,
        pod_template,
        provreq,
    )

    page = asgi_page
    docs = [node("worker-1"), *gpu_basics(), node_group("gpu-pool", max_size=0, devices=1),
            pod_template("worker"), provreq("req", pod_sets=[("worker", 2)])]
    scenario = _scenario(django_user_model, "scale", docs)
    with page.expect_websocket() as opened:
        page.goto(f"/scenarios/{scenario.pk}/")
    socket = opened.value
    request = page.locator('[data-request="default/req"]')
    assert "Provisioned=False (CapacityIsNotFound)" in request.inner_text()

    group = page.locator('[data-drag="group"][data-group="gpu-pool"]')
    for added in ("gpu-pool-1", "gpu-pool-2"):
        # A change swaps the body twice: the POST's answer and the socket's push. The next
        # drag starts once both arrived, or it may press on a body about to be replaced.
        with socket.expect_event("framereceived"), page.expect_response(
                lambda r: r.url.endswith("/changes/") and r.request.method == "POST"):
            _drag(page, group, page.locator("section.canvas"))
        page.locator(f'article[data-node="{added}"]').wait_for()
    assert "Provisioned=True" in page.locator('[data-request="default/req"]').inner_text()


def test_every_drag_has_a_keyboard_or_button_equivalent(asgi_page, django_user_model):
    page = asgi_page
    scenario = _scenario(django_user_model, "keyboard")
    page.goto(f"/scenarios/{scenario.pk}/")

    page.locator('[data-drag="pod"][data-pod="default/p1"]').focus()
    page.keyboard.press("Enter")  # opens the pod's own Move form, its node field focused
    page.keyboard.type("worker-3")
    page.keyboard.press("Enter")
    page.locator('article[data-node="worker-3"] [data-pod="default/p1"]').wait_for()

    page.locator('article[data-node="worker-1"]').get_by_role(
        "button", name="Remove node").click()
    page.locator('article[data-node="worker-1"]').wait_for(state="detached")
    assert "− worker-1" in page.locator(".outcome").inner_text()
    page.get_by_role("button", name="Undo").click()
    page.locator('article[data-node="worker-1"]').wait_for()


def test_another_tab_of_the_same_scenario_follows_over_the_websocket(
        asgi_page, django_user_model):
    page = asgi_page
    scenario = _scenario(django_user_model, "two tabs")
    other = page.open_another()
    log_in(other)
    other.goto(f"/scenarios/{scenario.pk}/")
    page.goto(f"/scenarios/{scenario.pk}/")
    page.wait_for_timeout(300)  # both sockets open
    page.locator('article[data-node="worker-2"]').get_by_role(
        "button", name="Remove node").click()
    other.locator('article[data-node="worker-2"]').wait_for(state="detached")
    assert "− worker-2" in other.locator(".outcome").inner_text()


def _settled(page, socket, action) -> None:
    """Run ``action`` (a change) and wait for both swaps: the POST's answer, the socket's push."""
    with socket.expect_event("framereceived"), page.expect_response(
            lambda r: r.request.method == "POST"):
        action()


def test_a_refusal_is_shown_at_the_drop_target_and_goes_with_the_next_success(
        asgi_page, django_user_model):
    page = asgi_page
    scenario = _scenario(django_user_model, "answers")
    with page.expect_websocket() as opened:
        page.goto(f"/scenarios/{scenario.pk}/")
    socket = opened.value

    _drag(page, page.locator('[data-drag="pod"][data-pod="default/p0"]'),
          page.locator('article[data-node="worker-2"]'))
    refusal = page.locator('article[data-node="worker-2"] [data-refused="true"]')
    refusal.wait_for()
    assert "cannot run on worker-2" in refusal.inner_text()
    assert page.locator('#scenario-message [data-refused="true"]').count() == 0
    assert page.locator("[data-refused]").count() == 1

    _settled(page, socket, lambda: _drag(
        page, page.locator('[data-drag="pod"][data-pod="default/p0"]'),
        page.locator('article[data-node="worker-3"]')))
    page.locator('article[data-node="worker-3"] [data-pod="default/p0"]').wait_for()
    assert page.locator("[data-refused]").count() == 0
    done = page.locator('article[data-node="worker-3"] [data-done]')
    assert done.inner_text() == "Pin default/p0 to worker-3"
    assert page.js_errors == []


def test_a_drop_keeps_the_page_where_it_was(asgi_page, django_user_model):
    page = asgi_page
    page.set_viewport_size({"width": 1280, "height": 600})
    scenario = _scenario(django_user_model, "no jump")
    with page.expect_websocket() as opened:
        page.goto(f"/scenarios/{scenario.pk}/")
    socket = opened.value
    target = page.locator('article[data-node="worker-3"]')
    target.scroll_into_view_if_needed()
    page.evaluate("window.scrollBy(0, 40)")
    before = page.evaluate("window.scrollY")
    assert before > 0

    _settled(page, socket, lambda: _drag(
        page, page.locator('[data-drag="pod"][data-pod="default/p1"]'),
        page.locator('article[data-node="worker-3"]')))
    page.locator('article[data-node="worker-3"] [data-pod="default/p1"]').wait_for()
    page.wait_for_function("document.querySelector('[data-done]') !== null")
    assert page.evaluate("window.scrollY") == before
    assert page.evaluate("String(window.getSelection())") == ""


def test_dragging_selects_no_text_and_shows_it_is_busy(asgi_page, django_user_model):
    page = asgi_page
    scenario = _scenario(django_user_model, "no selection")
    page.goto(f"/scenarios/{scenario.pk}/")
    source = _box(page.locator('[data-drag="pod"][data-pod="default/p0"]'))
    end = _box(page.locator(".outcome"))
    page.mouse.move(source["x"] + 10, source["y"] + 8)
    page.mouse.down()
    page.mouse.move(end["x"] + 40, end["y"] + 80, steps=10)  # across the page's text
    assert page.evaluate("getComputedStyle(document.body).userSelect") == "none"
    assert page.evaluate("String(window.getSelection())") == ""
    page.mouse.up()  # on the outcome: not a drop zone, nothing is sent
    assert page.evaluate("getComputedStyle(document.body).userSelect") != "none"

    # While a drop is evaluated (here: held back until the test lets it go), its target
    # says so.
    held = []
    page.route("**/changes/", lambda route: held.append(route))
    _drag(page, page.locator('[data-drag="pod"][data-pod="default/p0"]'),
          page.locator('article[data-node="worker-3"]'))
    page.locator('article[data-node="worker-3"][aria-busy="true"]').wait_for()
    assert page.locator(".busy-note").is_visible()
    assert len(held) == 1
    held[0].continue_()
    page.locator('article[data-node="worker-3"] [data-pod="default/p0"]').wait_for()
    assert not page.locator(".busy-note").is_visible()


def test_undo_and_redo_by_keyboard(asgi_page, django_user_model):
    page = asgi_page
    scenario = _scenario(django_user_model, "ctrl z")
    with page.expect_websocket() as opened:
        page.goto(f"/scenarios/{scenario.pk}/")
    socket = opened.value
    _settled(page, socket, lambda: page.locator('article[data-node="worker-1"]').get_by_role(
        "button", name="Remove node").click())
    page.locator('article[data-node="worker-1"]').wait_for(state="detached")

    page.locator("h1").click()  # focus on the page, not in a field
    _settled(page, socket, lambda: page.keyboard.press("Control+z"))
    page.locator('article[data-node="worker-1"]').wait_for()
    assert page.locator(".history li.undone").count() == 1
    assert "− worker-1" not in page.locator(".outcome").inner_text()

    _settled(page, socket, lambda: page.keyboard.press("Control+Shift+Z"))
    page.locator('article[data-node="worker-1"]').wait_for(state="detached")
    assert page.locator(".history li.undone").count() == 0


def test_node_cards_keep_their_order_after_a_change(asgi_page, django_user_model):
    page = asgi_page
    scenario = _scenario(django_user_model, "order")
    with page.expect_websocket() as opened:
        page.goto(f"/scenarios/{scenario.pk}/")
    socket = opened.value
    order = "Array.from(document.querySelectorAll('article[data-node]'), e => e.dataset.node)"
    assert page.evaluate(order) == ["worker-1", "worker-2", "worker-3"]
    _settled(page, socket, lambda: _drag(
        page, page.locator('[data-drag="pod"][data-pod="default/p0"]'),
        page.locator('article[data-node="worker-3"]')))
    page.locator('article[data-node="worker-3"] [data-pod="default/p0"]').wait_for()
    assert page.evaluate(order) == ["worker-1", "worker-2", "worker-3"]


def test_the_provisioning_classes_are_the_clusters(asgi_page, django_user_model):
    from tests.allocation.engine.autoscaler.builders import gpu_basics, node_group, pod_template

    page = asgi_page
    docs = [node("worker-1"), *gpu_basics(), node_group("gpu-pool", max_size=2, devices=1),
            pod_template("worker")]
    scenario = _scenario(django_user_model, "classes", docs)
    page.goto(f"/scenarios/{scenario.pk}/")
    options = page.get_by_label("provisioningClassName of default/worker").locator("option")
    assert options.all_inner_texts() == ["check-capacity.autoscaling.x-k8s.io",
                                         "best-effort-atomic-scale-up.autoscaling.x-k8s.io"]


def test_a_broken_selector_is_refused_in_words_with_its_position(asgi_page, django_user_model):
    page = asgi_page
    scenario = _scenario(django_user_model, "selector")
    page.goto(f"/scenarios/{scenario.pk}/")
    form = page.locator(".selector-form").first
    field = form.locator("input[name=expression]")
    field.fill(field.input_value() + " && && true")
    form.get_by_role("button", name="Apply").click()
    refusal = form.locator("xpath=ancestor::section").locator("[data-refused]")
    refusal.wait_for()
    text = refusal.inner_text()
    assert "unexpected '&&'" in text and ", column " in text
    assert "expecting" not in text and "IDENTIFIER" not in text


def test_a_large_scenario_keeps_the_bin_in_reach_and_shows_a_drop_is_busy(
        asgi_page, django_user_model):
    from tests.scenarios.test_views import _many

    page = asgi_page
    scenario = _scenario(django_user_model, "large", _many(nodes=70, pending=40))
    page.goto(f"/scenarios/{scenario.pk}/")
    queue = page.locator(".queue")
    assert "40 pods: 0/72 nodes are available" in queue.inner_text()
    assert "wants-gpu-000" not in queue.inner_text()  # a long group starts closed
    queue.get_by_text("40 pods").click()
    assert "default/wants-gpu-000" in queue.inner_text()
    assert "and 15 more: move them with the Move form." in queue.inner_text()
    viewport = page.viewport_size["height"]
    bin_box, queue_box = _box(page.locator(".bin")), _box(queue)
    assert bin_box["y"] >= 0 and bin_box["y"] + bin_box["height"] <= viewport  # in view
    # the queue scrolls within itself: it starts in view and never pushes the page far down
    assert queue_box["y"] + 50 <= viewport and queue_box["height"] <= viewport / 2
    assert queue.evaluate("e => e.scrollHeight > e.clientHeight")

    held = []
    page.route("**/changes/", lambda route: held.append(route))
    _drag(page, page.locator('article[data-node="spare-001"]'), page.locator(".bin"))
    page.locator(".scenario[data-busy]").wait_for()
    assert page.locator(".busy-note").is_visible()
    assert len(held) == 1
    held[0].continue_()
    page.locator('article[data-node="spare-001"]').wait_for(state="detached")
    assert page.locator(".history li").first.inner_text() == \
        "Remove node spare-001 (its pods are replanned)"
    assert not page.locator(".busy-note").is_visible()

    page.get_by_label("Find nodes", exact=False).locator("input").fill("spare-06")
    page.get_by_role("button", name="Find").click()
    page.wait_for_url("**nodes=spare-06**")
    assert page.locator("article.node-card").count() == 10


def test_dragging_near_the_windows_edges_scrolls_the_page(asgi_page, django_user_model):
    """A target below the window is reached by holding the pointer near its bottom edge; near
    the top edge the page scrolls back. The page's clock is held and run on by hand, so the
    animation frames that scroll happen when the test says, not with the machine's speed."""
    page = asgi_page
    page.set_viewport_size({"width": 1280, "height": 420})
    scenario = _scenario(django_user_model, "auto-scroll")
    page.clock.install()
    page.goto(f"/scenarios/{scenario.pk}/")
    page.evaluate("window.scrollTo(0, 0)")
    source = page.locator('[data-drag="pod"][data-pod="default/p0"]')
    target = page.locator('article[data-node="worker-3"]')
    height = 420
    assert _box(target)["y"] > height  # below the window: a person cannot see it
    page.clock.pause_at(page.evaluate("Date.now()") / 1000 + 1)  # seconds

    start = _box(source)
    page.mouse.move(start["x"] + 10, start["y"] + 8)
    page.mouse.down()
    page.mouse.move(start["x"] + 30, start["y"] + 30, steps=4)
    page.mouse.move(start["x"] + 30, height - 8, steps=4)  # rests near the bottom edge
    for _ in range(60):
        if _box(target)["y"] + 40 < height - 48:
            break
        page.clock.run_for(100)
    box = _box(target)
    assert box["y"] + 40 < height - 48, "the page did not scroll towards the bottom"
    scrolled = page.evaluate("window.scrollY")
    assert scrolled > 0
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 30, steps=2)  # out of the edge
    page.clock.run_for(100)
    assert page.evaluate("window.scrollY") == scrolled  # it stops away from the edge
    page.mouse.up()
    page.clock.resume()
    page.locator('article[data-node="worker-3"] [data-pod="default/p0"]').wait_for()

    # Near the top edge it scrolls back up; released on no target, nothing is sent.
    moved = page.locator('article[data-node="worker-3"] [data-pod="default/p0"]')
    page.clock.pause_at(page.evaluate("Date.now()") / 1000 + 1)  # seconds
    before = page.evaluate("window.scrollY")
    start = _box(moved)
    page.mouse.move(start["x"] + 10, start["y"] + 8)
    page.mouse.down()
    page.mouse.move(start["x"] + 30, start["y"] + 30, steps=4)
    page.mouse.move(start["x"] + 30, 6, steps=4)
    page.clock.run_for(500)
    assert page.evaluate("window.scrollY") < before
    page.mouse.up()
    page.clock.resume()
    assert page.locator(".history li").first.inner_text() == "Pin default/p0 to worker-3"
    assert page.locator(".history li").count() == 1


def test_the_keyboard_alone_reaches_each_action_and_keeps_its_place(asgi_page,
                                                                     django_user_model):
    """Enter on a node card reaches the card's own Remove button (not a pod's); after a change
    the focus is where it was (or on Undo when that is gone), so the next key works without
    tabbing through the page again (docs/scenarios.md, "Changes")."""
    page = asgi_page
    scenario = _scenario(django_user_model, "keyboard only")
    with page.expect_websocket() as opened:
        page.goto(f"/scenarios/{scenario.pk}/")
    socket = opened.value
    card = page.locator('article[data-node="worker-1"]')
    assert card.locator('[data-pod="default/p0"]').count() == 1  # a card with a pod's buttons

    card.focus()
    page.keyboard.press("Enter")
    expect(card.get_by_role("button", name="Remove node")).to_be_focused()
    _settled(page, socket, lambda: page.keyboard.press("Enter"))
    card.wait_for(state="detached")
    expect(page.get_by_role("button", name="Undo")).to_be_focused()  # the card is gone

    _settled(page, socket, lambda: page.keyboard.press("Enter"))
    card.wait_for()
    expect(page.get_by_role("button", name="Redo")).to_be_focused()  # Undo has nothing left
    assert page.locator(".history li.undone").count() == 1

    # A pod's Move form: after the move the focus is on the pod, in its new place.
    pod = page.locator('[data-drag="pod"][data-pod="default/p1"]')
    pod.focus()
    page.keyboard.press("Enter")
    page.keyboard.type("worker-3")
    _settled(page, socket, lambda: page.keyboard.press("Enter"))
    moved = page.locator('article[data-node="worker-3"] [data-pod="default/p1"]')
    moved.wait_for()
    expect(moved).to_be_focused()
    page.keyboard.press("Control+z")
    page.locator('article[data-node="worker-3"] [data-pod="default/p1"]').wait_for(
        state="detached")
