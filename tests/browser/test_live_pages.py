"""Live pages in a real browser: what a person sees, and changes arriving without reload."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.allocation.presenters.docs import cluster_docs
from tests.factories import claim, node, pod, to_yaml

pytestmark = pytest.mark.browser


def _stored(services, docs: list[dict]) -> None:
    services.import_texts([("cluster.yaml", to_yaml(docs))])
    services.reconcile()


def _open_live(page, path: str) -> None:
    page.goto(path)
    expect(page.locator(".live")).to_have_attribute("data-socket", "open")
    page.evaluate("window.loadedOnce = true")  # gone if the page reloads


def test_dashboard_shows_a_pending_pods_reason(asgi_page, services):
    _stored(services, cluster_docs())

    asgi_page.goto("/dashboard/")

    group = asgi_page.locator("details.reason-group")
    expect(group.locator("summary")).to_have_text(
        "2 pods: 0/2 nodes are available: 2 cannot allocate all claims.")
    waiting = asgi_page.locator('[data-pod="default/waiting"]')
    expect(waiting).to_be_hidden()  # pods are listed once the group is opened
    group.locator("summary").click()
    expect(waiting.get_by_role("link")).to_have_text("default/waiting")
    assert asgi_page.js_errors == []


def test_node_page_draws_the_partition_tree(asgi_page, services):
    _stored(services, cluster_docs())

    asgi_page.goto("/nodes/gpu-node/")

    leaf = asgi_page.locator('.box.instance[data-id="gpu-0/halves/half-0"]')
    expect(leaf).to_have_attribute("data-status", "allocated")
    expect(leaf.locator("a.claim")).to_have_text("default/half-a")
    blocked = asgi_page.locator('.box.instance[data-id="gpu-0/whole/full"]')
    expect(blocked).to_have_attribute("data-status", "blocked")
    expect(blocked).to_contain_text("locked to scheme halves by claim(s) default/half-a")
    free = asgi_page.locator('.box.instance[data-id="gpu-0/halves/half-1"]')
    expect(free).to_have_attribute("data-status", "free")
    # Nested boxes: the leaf is drawn inside its scheme, inside its GPU.
    assert asgi_page.locator('[data-id="gpu-0"] [data-id="gpu-0/halves"] '
                             '[data-id="gpu-0/halves/half-0"]').count() == 1
    expect(asgi_page.locator('tr[data-counter="vf"]')).to_contain_text("3 / 4")
    # Each scheme says what its partitions are (their attributes), not only their names.
    expect(asgi_page.locator('[data-id="gpu-0/halves"] > .attributes')).to_have_text(
        "memory=40Gi")
    expect(asgi_page.locator('[data-id="gpu-0/whole"] > .attributes')).to_have_text(
        "memory=80Gi")


def test_an_imported_pod_appears_on_the_open_dashboard_without_reload(asgi_page, services):
    _stored(services, [node("only", cpu="1")])
    _open_live(asgi_page, "/dashboard/")
    expect(asgi_page.locator('[data-pod="default/big"]')).to_have_count(0)

    services.import_texts([("more.yaml", to_yaml([pod("big", cpu="2")]))])
    # The dashboard reads the read model: the worker's pass writes the pod's row, with the
    # scheduler's verdict.
    services.reconcile()

    group = asgi_page.locator("details.reason-group")
    expect(group.locator("summary")).to_have_text(
        "1 pod: 0/1 nodes are available: 1 Insufficient cpu.")
    group.locator("summary").click()
    expect(asgi_page.locator('[data-pod="default/big"]')).to_be_visible()
    assert asgi_page.evaluate("window.loadedOnce") is True
    assert asgi_page.js_errors == []


def test_a_reason_group_opened_stays_open_when_a_push_redraws_it(asgi_page, services):
    _stored(services, [node("only", cpu="1"), pod("big", cpu="2")])
    _open_live(asgi_page, "/dashboard/")
    group = asgi_page.locator("details.reason-group")
    group.locator("summary").click()
    expect(asgi_page.locator('[data-pod="default/big"]')).to_be_visible()

    services.import_texts([("more.yaml", to_yaml([pod("bigger", cpu="3")]))])
    services.reconcile()

    expect(group.locator("summary")).to_have_text(
        "2 pods: 0/1 nodes are available: 1 Insufficient cpu.")
    expect(asgi_page.locator('[data-pod="default/bigger"]')).to_be_visible()
    expect(asgi_page.locator('[data-pod="default/big"]')).to_be_visible()
    assert asgi_page.evaluate("window.loadedOnce") is True
    assert asgi_page.js_errors == []


def test_a_claim_turns_allocated_on_its_open_page(asgi_page, services):
    docs = cluster_docs()
    _stored(services, docs)
    _open_live(asgi_page, "/nodes/gpu-node/")
    leaf = asgi_page.locator('.box.instance[data-id="gpu-0/halves/half-1"]')
    expect(leaf).to_have_attribute("data-status", "free")

    _stored(services, [claim("half-b", "mig", params="half"),
                       pod("second-half-user", claims={"gpu": "half-b"})])

    expect(leaf).to_have_attribute("data-status", "allocated")
    expect(leaf.locator("a.claim")).to_have_text("default/half-b")
    assert asgi_page.evaluate("window.loadedOnce") is True


def test_upload_with_errors_lists_them_and_a_good_one_updates_another_open_page(asgi_page,
                                                                                 services):
    _stored(services, [node("n1")])
    _open_live(asgi_page, "/dashboard/")
    uploader = asgi_page.open_another()
    from tests.browser.conftest import log_in

    log_in(uploader)
    uploader.goto("/upload/")
    uploader.get_by_label("Or paste YAML").fill("apiVersion: v1\nkind: Pod\nmetadata: {}\n")
    uploader.get_by_role("button", name="Import").click()
    expect(uploader.locator(".problem-list li")).to_contain_text(
        ["pasted.yaml:1 (Pod default/<unnamed>): metadata.name"])

    uploader.get_by_label("Or paste YAML").fill(to_yaml([pod("uploaded")]))
    uploader.get_by_role("button", name="Import").click()
    uploader.wait_for_url("**/dashboard/")
    services.reconcile()  # the worker's pass writes the rows the dashboard reads

    expect(asgi_page.locator("#dashboard-pending h2")).to_contain_text("(1 bound)")
    assert asgi_page.evaluate("window.loadedOnce") is True
