"""Swagger UI and Redoc in a real browser: both load the schema from /api/schema/ and show
the operations, with every asset served by the console itself (no CDN)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def _watch_foreign(page, base_url: str) -> Callable[[], list[str]]:
    """A function giving the URLs the page requested from anywhere but the console, except
    those its Content-Security-Policy stopped inside the browser (Redoc's own logo:
    console/api_docs.py)."""
    seen: list = []
    page.on("request", lambda request: seen.append(request)
            if not request.url.startswith((base_url, "data:", "blob:")) else None)

    def left() -> list[str]:
        for request in seen:
            request.response()  # wait until it is answered or has failed
        return [r.url for r in seen if "csp" not in (r.failure or "").lower()]

    return left


def test_swagger_ui_loads_the_schema_and_lists_the_operations(asgi_page, asgi_server):
    foreign = _watch_foreign(asgi_page, asgi_server.url)

    asgi_page.goto("/api/docs/")

    expect(asgi_page.get_by_role("heading", name="DRA Planner API")).to_be_visible()
    expect(asgi_page.locator(".opblock-summary-path", has_text="/api/nodes/").first
           ).to_be_visible()
    expect(asgi_page.locator(".opblock-get").first).to_be_visible()
    expect(asgi_page.locator(".opblock-post").first).to_be_visible()
    assert foreign() == []
    assert asgi_page.js_errors == []


def test_redoc_renders_the_schema(asgi_page, asgi_server):
    foreign = _watch_foreign(asgi_page, asgi_server.url)

    asgi_page.goto("/api/redoc/")

    # Redoc parses the whole schema in the page before it draws: a generous bound, not a
    # timing (a slow shared machine takes seconds).
    expect(asgi_page.get_by_role("heading", name="DRA Planner API (v1alpha1)")).to_be_visible(
        timeout=120_000)
    expect(asgi_page.get_by_role("link", name="Download")).to_be_visible()
    expect(asgi_page.get_by_text("nodegroups", exact=True).first).to_be_attached()
    assert foreign() == []


def test_the_schema_opens_in_the_browser_tab_instead_of_downloading(asgi_page):
    response = asgi_page.goto("/api/schema/")  # a download would raise "Download is starting"

    assert response.status == 200
    expect(asgi_page.locator("body")).to_contain_text("openapi: 3.")
    expect(asgi_page.locator("body")).to_contain_text("/api/nodes/:")
