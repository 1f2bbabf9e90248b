"""The scenario page at size and by keyboard in real Chromium: the bin stays in reach of a
long queue, a drag near the window's edges scrolls, every action is reachable without a
pointer and keeps its place.

The pages run on the in-process ASGI server (``asgi_page``), so their WebSockets work.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.scenario_page import (
    HeldChanges,
    box_of,
    drag,
    new_scenario,
    open_scenario,
    settled,
)

pytestmark = pytest.mark.browser


def test_a_large_scenario_keeps_the_bin_in_reach_and_shows_a_drop_is_busy(
        asgi_page, django_user_model):
    from tests.scenarios.test_views import _many

    page = asgi_page
    scenario = new_scenario(django_user_model, "large", _many(nodes=70, pending=40))
    page.goto(f"/scenarios/{scenario.pk}/")
    queue = page.locator(".queue")
    assert "40 pods: 0/72 nodes are available" in queue.inner_text()
    assert "wants-gpu-000" not in queue.inner_text()  # a long group starts closed
    queue.get_by_text("40 pods").click()
    expect(queue).to_contain_text("default/wants-gpu-000")
    assert "and 15 more: move them with the Move form." in queue.inner_text()
    viewport = page.viewport_size["height"]
    bin_box, queue_box = box_of(page.locator(".bin")), box_of(queue)
    assert bin_box["y"] >= 0 and bin_box["y"] + bin_box["height"] <= viewport  # in view
    # the queue scrolls within itself: it starts in view and never pushes the page far down
    assert queue_box["y"] + 50 <= viewport and queue_box["height"] <= viewport / 2
    assert queue.evaluate("e => e.scrollHeight > e.clientHeight")

    held = HeldChanges(page)
    drag(page, page.locator('article[data-node="spare-001"]'), page.locator(".bin"))
    page.locator(".scenario[data-busy]").wait_for()
    assert page.locator(".busy-note").is_visible()
    held.only().continue_()
    page.locator('article[data-node="spare-001"]').wait_for(state="detached")
    assert page.locator(".history li").first.inner_text() == \
        "Remove node spare-001 (its pods are replanned)"
    expect(page.locator(".busy-note")).to_be_hidden()  # once the answer is in (auto-waits)

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
    scenario = new_scenario(django_user_model, "auto-scroll")
    page.clock.install()
    page.goto(f"/scenarios/{scenario.pk}/")
    page.evaluate("window.scrollTo(0, 0)")
    source = page.locator('[data-drag="pod"][data-pod="default/p0"]')
    target = page.locator('article[data-node="worker-3"]')
    height = 420
    assert box_of(target)["y"] > height  # below the window: a person cannot see it
    page.clock.pause_at(page.evaluate("Date.now()") / 1000 + 1)  # seconds

    start = box_of(source)
    page.mouse.move(start["x"] + 10, start["y"] + 8)
    page.mouse.down()
    page.mouse.move(start["x"] + 30, start["y"] + 30, steps=4)
    page.mouse.move(start["x"] + 30, height - 8, steps=4)  # rests near the bottom edge
    for _ in range(60):
        if box_of(target)["y"] + 40 < height - 48:
            break
        page.clock.run_for(100)
    box = box_of(target)
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
    start = box_of(moved)
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
    scenario = new_scenario(django_user_model, "keyboard only")
    open_scenario(page, scenario)
    card = page.locator('article[data-node="worker-1"]')
    assert card.locator('[data-pod="default/p0"]').count() == 1  # a card with a pod's buttons

    card.focus()
    page.keyboard.press("Enter")
    expect(card.get_by_role("button", name="Remove node")).to_be_focused()
    settled(page, lambda: page.keyboard.press("Enter"))
    card.wait_for(state="detached")
    expect(page.get_by_role("button", name="Undo")).to_be_focused()  # the card is gone

    settled(page, lambda: page.keyboard.press("Enter"))
    card.wait_for()
    expect(page.get_by_role("button", name="Redo")).to_be_focused()  # Undo has nothing left
    assert page.locator(".history li.undone").count() == 1

    # A pod's Move form: after the move the focus is on the pod, in its new place.
    pod = page.locator('[data-drag="pod"][data-pod="default/p1"]')
    pod.focus()
    page.keyboard.press("Enter")
    page.keyboard.type("worker-3")
    settled(page, lambda: page.keyboard.press("Enter"))
    moved = page.locator('article[data-node="worker-3"] [data-pod="default/p1"]')
    moved.wait_for()
    expect(moved).to_be_focused()
    page.keyboard.press("Control+z")
    page.locator('article[data-node="worker-3"] [data-pod="default/p1"]').wait_for(
        state="detached")
