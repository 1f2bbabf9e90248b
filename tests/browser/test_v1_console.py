"""A resource.k8s.io/v1 cluster in a real browser: uploaded through the upload page, the
worker's pass appears on the open node page without reload, and the claim page shows the
allocation."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.factories import to_yaml
from tests.v1_cluster import DRIVER, cluster

pytestmark = pytest.mark.browser


def test_an_uploaded_v1_cluster_is_allocated_on_the_open_node_and_claim_pages(asgi_page,
                                                                             services):
    asgi_page.goto("/upload/")
    asgi_page.get_by_label("Or paste YAML").fill(to_yaml(cluster()))
    asgi_page.get_by_role("button", name="Import").click()
    asgi_page.wait_for_url("**/dashboard/")

    asgi_page.goto("/nodes/n1/")
    expect(asgi_page.locator(".live")).to_have_attribute("data-socket", "open")
    asgi_page.evaluate("window.loadedOnce = true")  # gone if the page reloads
    half = asgi_page.locator('#node-v1-devices tr[data-device="gpu-0-a"]')
    expect(half).to_have_attribute("data-state", "free")  # stored, not yet reconciled

    services.reconcile()

    expect(half).to_have_attribute("data-state", "allocated")
    expect(half.locator("a.claim")).to_have_text("default/c1")
    expect(asgi_page.locator('tr[data-counter="gpu-0-counters/memory"]')).to_contain_text(
        "40Gi / 80Gi")
    expect(asgi_page.locator('tr[data-device="nic-0"]')).to_contain_text("2G in use")
    assert asgi_page.evaluate("window.loadedOnce") is True

    half.locator("a.claim").click()
    asgi_page.wait_for_url("**/claims/default/c1/")
    expect(asgi_page.locator("[data-claim-state]")).to_have_text("reserved")
    result = asgi_page.locator('.v1-results tr[data-device="gpu-0-a"]')
    expect(result).to_contain_text(DRIVER)
    expect(result).to_contain_text("n1")
    expect(asgi_page.get_by_text("metadata.name In [n1]")).to_be_visible()
    expect(asgi_page.get_by_role("link", name="p1", exact=True)).to_be_visible()
    assert asgi_page.js_errors == []
