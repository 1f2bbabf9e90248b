"""Why a pod is pending, as a person reads it in Chromium: the demo's h100-job and
wide-render, a pod pinned by node affinity, and a what-if pin refused in a scenario."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from playwright.sync_api import expect

from scenarios import services as scenario_services
from tests.browser.conftest import USER
from tests.browser.live_server import in_thread
from tests.factories import to_yaml
from tests.scenarios.cluster import store

pytestmark = pytest.mark.browser

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.yaml"


def _demo(extra: list[dict] = ()) -> list[dict]:
    return [d for d in yaml.safe_load_all(DEMO.read_text()) if d] + list(extra)


def _stored(services, docs: list[dict]) -> None:
    services.import_texts([("demo.yaml", to_yaml(docs))])
    services.reconcile()


def _why(page):
    return page.locator(".card.why")


def test_h100_job_shows_the_label_it_wants_and_what_each_node_has(asgi_page, services):
    _stored(services, _demo())
    asgi_page.goto("/pods/default/h100-job/")
    why = _why(asgi_page)

    nearest = why.locator(".nearest li")
    expect(nearest).to_have_count(3)
    expect(nearest.first).to_have_text("a100-1: nodeSelector wants gpu=h100; the node has "
                                       "gpu=a100")
    expect(why.locator('.node-explanation[data-node="t4-2"]')).to_contain_text(
        "t4-2: nodeSelector wants gpu=h100; the node has gpu=t4")
    expect(why.locator(".suggestions")).to_contain_text(
        "No node has label gpu=h100 (nodes have gpu=a100, gpu=t4)")
    # not the old words that said only that labels did not match
    expect(why).not_to_contain_text("labels do not match")

    why.get_by_text("Every check on every node").click()
    row = why.locator('table.checks tr[data-node="t4-1"]')
    expect(row.locator('[data-plugin="NodeAffinity"]')).to_have_text(
        "failed: nodeSelector wants gpu=h100; the node has gpu=t4")
    expect(row.locator('[data-plugin="NodeResourcesFit"]')).to_have_text("passed")
    assert asgi_page.js_errors == []


def test_wide_render_is_said_once_per_node_with_the_nearest_first(asgi_page, services):
    _stored(services, _demo())
    asgi_page.goto("/pods/default/wide-render/")
    why = _why(asgi_page)

    expect(why.locator(".nearest li").first).to_have_text(
        "t4-2: needs 3 devices of class t4 on one node; 2 free ones match")
    expect(why.locator(".nearest li").nth(1)).to_have_text(
        "t4-1: needs 3 devices of class t4 on one node; 1 free one matches")
    # the nearest node's detail is the one open, its three alike requests said once
    t4_2 = why.locator('details.node-explanation[data-node="t4-2"]')
    expect(t4_2).to_have_attribute("open", "")
    requests = t4_2.locator(".request-explanation")
    expect(requests).to_have_count(1)
    expect(requests).to_contain_text("2 free candidate(s) match (t4-0, t4-1), but not enough "
                                     "for all 3 alike requests.")
    expect(why).not_to_contain_text("but not together with the pod's other requests")

    why.get_by_text("Every check on every node").click()
    rows = why.locator("table.checks tbody tr")
    expect(rows).to_have_count(4)
    expect(rows.first).to_have_attribute("data-node", "t4-2")
    expect(rows.first.locator('[data-plugin="DynamicResources"]')).to_have_text(
        "failed: needs 3 devices of class t4 on one node; 2 free ones match")
    assert asgi_page.js_errors == []


def test_a_pod_pinned_by_node_affinity_shows_the_affinity_and_what_each_node_lacks(
        asgi_page, services):
    pinned = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pinned",
                                                            "namespace": "default"},
              "spec": {"affinity": {"nodeAffinity": {
                  "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                      {"matchFields": [{"key": "metadata.name", "operator": "In",
                                        "values": ["t4-2"]}]}]}}},
                  "containers": [{"name": "main", "image": "example/app",
                                  "resources": {"requests": {"cpu": "20"}}}]}}
    _stored(services, _demo([pinned]))
    asgi_page.goto("/pods/default/pinned/")

    expect(asgi_page.locator("dd.node-affinity")).to_have_text("metadata.name In (t4-2)")
    why = _why(asgi_page)
    expect(why.locator('.node-explanation[data-node="a100-1"]')).to_contain_text(
        "node affinity term 1 wants metadata.name In (t4-2); the node has "
        "metadata.name=a100-1")
    expect(why.locator(".nearest li").first).to_have_text(
        "t4-2: asks for 20 cpu; the node has 16 free")
    expect(why).not_to_contain_text("nodeSelector")
    assert asgi_page.js_errors == []


def test_a_refused_what_if_pin_says_how_many_devices_the_node_has(asgi_page, django_user_model):
    in_thread(store, _demo())
    scenario = in_thread(scenario_services.create,
                         django_user_model.objects.get(username=USER), "wide")
    with pytest.raises(scenario_services.Refused) as refused:
        in_thread(scenario_services.add_change, django_user_model.objects.get(username=USER),
                  scenario, {"op": "pin-pod", "pod": "default/wide-render", "node": "t4-2"})
    assert "needs 3 devices of class t4 on one node; 2 free ones match" in str(refused.value)
    assert "no candidates" not in str(refused.value)

    asgi_page.set_viewport_size({"width": 1400, "height": 2400})  # the queue and t4-2 in view
    asgi_page.goto(f"/scenarios/{scenario.pk}/")
    chip = asgi_page.locator('[data-drag="pod"][data-pod="default/wide-render"]')
    box = chip.evaluate("e => { const r = e.getBoundingClientRect();"
                        " return {x: r.x, y: r.y}; }")
    target = asgi_page.locator('article[data-node="t4-2"]').evaluate(
        "e => { const r = e.getBoundingClientRect();"
        " return {x: r.x + r.width / 2, y: r.y + 20}; }")
    asgi_page.mouse.move(box["x"] + 10, box["y"] + 8)
    asgi_page.mouse.down()
    asgi_page.mouse.move(box["x"] + 30, box["y"] + 30, steps=4)
    asgi_page.mouse.move(target["x"], target["y"], steps=8)
    asgi_page.mouse.up()

    message = asgi_page.locator('article[data-node="t4-2"] [data-refused="true"]')
    expect(message).to_contain_text("default/wide-render cannot run on t4-2: cannot allocate "
                                    "all claims - needs 3 devices of class t4 on one node; 2 "
                                    "free ones match")
    assert asgi_page.js_errors == []
