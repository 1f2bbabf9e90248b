"""What-if scenarios in real Chromium: dragging with the pointer, refusals, isolation.

The pages run on the in-process ASGI server (``asgi_page``), so their WebSockets work.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in
from tests.browser.scenario_page import (
    HeldChanges,
    box_of,
    drag,
    new_scenario,
    open_scenario,
    settled,
)
from tests.factories import node

pytestmark = pytest.mark.browser


def test_dragging_a_pod_onto_a_node_schedules_it_there_only_in_the_scenario(
        asgi_page, django_user_model):
    page = asgi_page
    scenario = new_scenario(django_user_model, "move p0")
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
    drag(page, pod, page.locator('article[data-node="worker-3"]'))

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
    scenario = new_scenario(django_user_model, "impossible")
    page.goto(f"/scenarios/{scenario.pk}/")

    drag(page, page.locator('[data-drag="pod"][data-pod="default/p0"]'),
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
    scenario = new_scenario(django_user_model, "scale", docs)
    open_scenario(page, scenario)
    request = page.locator('[data-request="default/req"]')
    assert "Provisioned=False (CapacityIsNotFound)" in request.inner_text()

    group = page.locator('[data-drag="group"][data-group="gpu-pool"]')
    for added in ("gpu-pool-1", "gpu-pool-2"):
        # The next drag starts once the answer is in, or it may press on a body about to be
        # replaced.
        settled(page, lambda: drag(page, group, page.locator("section.canvas")))
        page.locator(f'article[data-node="{added}"]').wait_for()
    assert "Provisioned=True" in page.locator('[data-request="default/req"]').inner_text()


def test_every_drag_has_a_keyboard_or_button_equivalent(asgi_page, django_user_model):
    page = asgi_page
    scenario = new_scenario(django_user_model, "keyboard")
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
    scenario = new_scenario(django_user_model, "two tabs")
    other = page.open_another()
    log_in(other)
    open_scenario(other, scenario)
    open_scenario(page, scenario)  # both sockets open
    page.locator('article[data-node="worker-2"]').get_by_role(
        "button", name="Remove node").click()
    other.locator('article[data-node="worker-2"]').wait_for(state="detached")
    assert "− worker-2" in other.locator(".outcome").inner_text()


def test_a_refusal_is_shown_at_the_drop_target_and_goes_with_the_next_success(
        asgi_page, django_user_model):
    page = asgi_page
    scenario = new_scenario(django_user_model, "answers")
    open_scenario(page, scenario)

    drag(page, page.locator('[data-drag="pod"][data-pod="default/p0"]'),
          page.locator('article[data-node="worker-2"]'))
    refusal = page.locator('article[data-node="worker-2"] [data-refused="true"]')
    refusal.wait_for()
    assert "cannot run on worker-2" in refusal.inner_text()
    assert page.locator('#scenario-message [data-refused="true"]').count() == 0
    assert page.locator("[data-refused]").count() == 1

    settled(page, lambda: drag(
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
    scenario = new_scenario(django_user_model, "no jump")
    open_scenario(page, scenario)
    target = page.locator('article[data-node="worker-3"]')
    target.scroll_into_view_if_needed()
    page.evaluate("window.scrollBy(0, 40)")
    before = page.evaluate("window.scrollY")
    assert before > 0

    settled(page, lambda: drag(
        page, page.locator('[data-drag="pod"][data-pod="default/p1"]'),
        page.locator('article[data-node="worker-3"]')))
    page.locator('article[data-node="worker-3"] [data-pod="default/p1"]').wait_for()
    page.wait_for_function("document.querySelector('[data-done]') !== null")
    assert page.evaluate("window.scrollY") == before
    assert page.evaluate("String(window.getSelection())") == ""


def test_dragging_selects_no_text_and_shows_it_is_busy(asgi_page, django_user_model):
    page = asgi_page
    scenario = new_scenario(django_user_model, "no selection")
    page.goto(f"/scenarios/{scenario.pk}/")
    source = box_of(page.locator('[data-drag="pod"][data-pod="default/p0"]'))
    end = box_of(page.locator(".outcome"))
    page.mouse.move(source["x"] + 10, source["y"] + 8)
    page.mouse.down()
    page.mouse.move(end["x"] + 40, end["y"] + 80, steps=10)  # across the page's text
    assert page.evaluate("getComputedStyle(document.body).userSelect") == "none"
    assert page.evaluate("String(window.getSelection())") == ""
    page.mouse.up()  # on the outcome: not a drop zone, nothing is sent
    assert page.evaluate("getComputedStyle(document.body).userSelect") != "none"

    # While a drop is evaluated (here: held back until the test lets it go), its target
    # says so.
    held = HeldChanges(page)
    drag(page, page.locator('[data-drag="pod"][data-pod="default/p0"]'),
          page.locator('article[data-node="worker-3"]'))
    page.locator('article[data-node="worker-3"][aria-busy="true"]').wait_for()
    assert page.locator(".busy-note").is_visible()
    held.only().continue_()
    page.locator('article[data-node="worker-3"] [data-pod="default/p0"]').wait_for()
    expect(page.locator(".busy-note")).to_be_hidden()  # once the answer is in (auto-waits)


def test_undo_and_redo_by_keyboard(asgi_page, django_user_model):
    page = asgi_page
    scenario = new_scenario(django_user_model, "ctrl z")
    open_scenario(page, scenario)
    # htmx processes a swapped-in body only when it settles (20 ms on by default): a key
    # pressed sooner must still reach the new body's buttons, so make that window long.
    page.evaluate("htmx.config.defaultSettleDelay = 60000")
    settled(page, lambda: page.locator('article[data-node="worker-1"]').get_by_role(
        "button", name="Remove node").click())
    page.locator('article[data-node="worker-1"]').wait_for(state="detached")

    page.locator("h1").click()  # focus on the page, not in a field
    settled(page, lambda: page.keyboard.press("Control+z"))
    page.locator('article[data-node="worker-1"]').wait_for()
    assert page.locator(".history li.undone").count() == 1
    assert "− worker-1" not in page.locator(".outcome").inner_text()

    settled(page, lambda: page.keyboard.press("Control+Shift+Z"))
    page.locator('article[data-node="worker-1"]').wait_for(state="detached")
    assert page.locator(".history li.undone").count() == 0


def test_node_cards_keep_their_order_after_a_change(asgi_page, django_user_model):
    page = asgi_page
    scenario = new_scenario(django_user_model, "order")
    open_scenario(page, scenario)
    order = "Array.from(document.querySelectorAll('article[data-node]'), e => e.dataset.node)"
    assert page.evaluate(order) == ["worker-1", "worker-2", "worker-3"]
    settled(page, lambda: drag(
        page, page.locator('[data-drag="pod"][data-pod="default/p0"]'),
        page.locator('article[data-node="worker-3"]')))
    page.locator('article[data-node="worker-3"] [data-pod="default/p0"]').wait_for()
    assert page.evaluate(order) == ["worker-1", "worker-2", "worker-3"]


def test_the_provisioning_classes_are_the_clusters(asgi_page, django_user_model):
    from tests.allocation.engine.autoscaler.builders import gpu_basics, node_group, pod_template

    page = asgi_page
    docs = [node("worker-1"), *gpu_basics(), node_group("gpu-pool", max_size=2, devices=1),
            pod_template("worker")]
    scenario = new_scenario(django_user_model, "classes", docs)
    page.goto(f"/scenarios/{scenario.pk}/")
    options = page.get_by_label("provisioningClassName of default/worker").locator("option")
    assert options.all_inner_texts() == ["check-capacity.autoscaling.x-k8s.io",
                                         "best-effort-atomic-scale-up.autoscaling.x-k8s.io"]


def test_a_broken_selector_is_refused_in_words_with_its_position(asgi_page, django_user_model):
    page = asgi_page
    scenario = new_scenario(django_user_model, "selector")
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


def test_a_large_clusters_first_view_shows_it_is_preparing_then_the_planner(
        asgi_page, django_user_model, monkeypatch):
    from scenarios import evaluation

    page = asgi_page
    scenario = new_scenario(django_user_model, "first view")
    monkeypatch.setattr(evaluation, "PREPARE_FROM", 1)  # as if large
    evaluation.clear_caches()  # a server process that has made no baseline yet
    held = []
    page.route("**/body/**", lambda route: held.append(route))  # held until let go

    open_scenario(page, scenario)
    expect(page.get_by_role("status")).to_contain_text("Preparing the baseline")
    assert page.locator("[data-drag]").count() == 0
    for _ in range(200):  # round trips, during which Playwright hands the request over
        if held:
            break
        page.evaluate("0")
    assert len(held) == 1
    held[0].continue_()

    pod = page.locator('[data-drag="pod"][data-pod="default/p0"]')
    expect(pod).to_be_visible()
    expect(page.get_by_text("Preparing the baseline")).to_have_count(0)
    # the planner swapped in works as one drawn with the page: a drag is a change
    drag(page, pod, page.locator('article[data-node="worker-3"]'))
    page.locator('article[data-node="worker-3"] [data-pod="default/p0"]').wait_for()
    assert page.js_errors == []


def test_a_first_view_whose_planner_cannot_be_prepared_says_so(asgi_page, django_user_model,
                                                                 monkeypatch):
    from scenarios import evaluation

    page = asgi_page
    scenario = new_scenario(django_user_model, "broken first view")
    monkeypatch.setattr(evaluation, "PREPARE_FROM", 1)  # as if large
    evaluation.clear_caches()
    page.route("**/body/**", lambda route: route.fulfill(status=500, body="server error"))

    open_scenario(page, scenario)
    expect(page.get_by_role("status")).to_have_text(
        "The planner could not be prepared (HTTP 500). Reload the page to try again.")
    assert page.locator("#scenario-body").get_attribute("aria-busy") is None
