"""The production settings in a real browser: daphne serves the static files (WhiteNoise).

``console.settings_production`` runs under daphne in a subprocess, after ``collectstatic``
into a temporary ``STATIC_ROOT``, as docs/console.md says to deploy it. The browser plays a
client behind a TLS-terminating proxy (``X-Forwarded-Proto: https`` with
``DJANGO_SECURE_PROXY_SSL_HEADER=1``) on ``localhost``, where Chromium keeps Secure cookies
over plain HTTP. A live page must load htmx and its WebSocket extension and connect.
"""

from __future__ import annotations

import secrets

import pytest
from playwright.sync_api import expect

from tests import server_process
from tests.browser.conftest import _open_page, log_in

pytestmark = pytest.mark.browser

USER, PASSWORD = "grace", "compiler-pioneer-1952"


@pytest.fixture
def production_server(tmp_path, transactional_db):
    url, migrate = server_process.database_url(tmp_path)
    port = server_process.free_port()
    env = server_process.environment(
        url, "console.settings_production",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_STATIC_ROOT=str(tmp_path / "static"),
        DJANGO_SECURE_PROXY_SSL_HEADER="1",
        DJANGO_CSRF_TRUSTED_ORIGINS=f"http://localhost:{port}")
    server_process.manage(env, "collectstatic", "--noinput")
    if migrate:
        server_process.manage(env, "migrate", "--noinput")
    server_process.create_user(env, USER, PASSWORD)
    running = server_process.start(env, tmp_path / "daphne.log", host="localhost", port=port)
    yield running
    running.stop()


def test_production_server_serves_htmx_and_the_live_page_connects(browser, production_server):
    context, page = _open_page(browser, production_server.url)
    context.set_extra_http_headers({"X-Forwarded-Proto": "https"})
    try:
        static = page.request.get("/static/vendor/htmx.min.js")
        assert static.status == 200, production_server.output()[-3000:]
        log_in(page, USER, PASSWORD)

        page.goto("/dashboard/")

        page.wait_for_function("() => window.htmx !== undefined")
        assert page.evaluate("typeof window.htmx.version") == "string"
        # The ws extension and live.js loaded too: the page's socket opens.
        expect(page.locator(".live")).to_have_attribute("data-socket", "open")
        scripts = page.eval_on_selector_all("script[src]", "nodes => nodes.map(n => n.src)")
        assert any("/static/vendor/htmx-ext-ws." in src for src in scripts)
        assert page.js_errors == []
    finally:
        context.close()
