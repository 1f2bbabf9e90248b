"""The cluster overview and the list pages in a real browser: what a person sees."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from allocation.engine.constants import NODE_GROUP_LABEL
from tests.allocation.presenters.docs import cluster_docs
from tests.factories import node, to_yaml

pytestmark = pytest.mark.browser


def test_the_overview_picture_links_to_a_node(asgi_page, services):
    services.import_texts([("cluster.yaml", to_yaml(cluster_docs()))])
    services.reconcile()
    asgi_page.goto("/dashboard/")

    cell = asgi_page.locator(".overview a[title^='gpu-node']")
    expect(cell).to_have_attribute("title", "gpu-node: 57% in use")
    cell.click()

    asgi_page.wait_for_url("**/nodes/gpu-node/")
    expect(asgi_page.get_by_role("heading", level=1)).to_contain_text("gpu-node")
    assert asgi_page.js_errors == []


def test_a_filter_narrows_the_node_table(asgi_page, services):
    nodes = [node(f"n{i}", labels={NODE_GROUP_LABEL: "big" if i < 3 else "small"})
             for i in range(8)]
    services.import_texts([("nodes.yaml", to_yaml(nodes))])
    services.reconcile()
    asgi_page.goto("/nodes/")
    rows = asgi_page.locator("table.sortable tbody tr")
    expect(rows).to_have_count(8)

    asgi_page.get_by_label("Node group").fill("big")
    asgi_page.get_by_role("button", name="Filter").click()

    expect(rows).to_have_count(3)
    expect(rows.first.get_by_role("link")).to_have_text("n0")
    expect(asgi_page.get_by_role("heading", level=1)).to_have_text("Nodes 3")
    assert asgi_page.js_errors == []
