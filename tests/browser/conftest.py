"""Playwright (sync API) fixtures driving Debian's headless Chromium.

Fixtures for browser tests:

* ``browser`` (session): a Playwright ``Browser`` on ``/usr/bin/chromium``.
* ``page``: a fresh ``Page`` in a fresh context (own cookies/storage) per test,
  with ``base_url`` set to pytest-django's ``live_server`` so tests can call
  ``page.goto("/")``. Console errors and uncaught page errors are collected on
  ``page.js_errors`` (a list of strings) for tests that want to assert none occurred.

For live pages (WebSockets) use ``asgi_page`` instead: the same kind of page on an
in-process daphne server (``asgi_server``, see ``tests/browser/live_server.py``), with a
staff user ``ada`` already logged in through the login form and the database transactional.
The channel layer is the console's default (``console.channel_layer.LoopSafeChannelLayer``
unless ``REDIS_URL`` is set), which takes sends from other threads (services called by the
test through ``live_server.in_thread``, the worker). ``asgi_page.open_another()`` opens a
second page in a context of its own (its own session: log it in when it needs one); every
context a fixture opens is closed when the test ends, so no page keeps a socket open.

Mark browser tests with ``@pytest.mark.browser`` (``pytest -m browser`` runs only
them, ``-m "not browser"`` leaves them out); they run after all other tests.
``DJANGO_ALLOW_ASYNC_UNSAFE=true`` is set while Playwright runs (see
``playwright_instance``), so browser tests may use the ORM directly. A missing
Chromium is an error, not a skip: run ``make browser`` to install it.
"""

import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from playwright.sync_api import expect, sync_playwright

CHROMIUM = Path(os.environ.get("DRAPLANNER_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# How long an action or an ``expect`` waits for the page. Generous: on a busy 2-core machine
# a page's answer can take seconds, and a wait that runs out is a false failure; a page that
# never shows what a test expects still fails, only later.
DEFAULT_TIMEOUT_MS = 20_000
expect.set_options(timeout=DEFAULT_TIMEOUT_MS)


@pytest.fixture(scope="session")
def playwright_instance():
    # Playwright's sync API runs an asyncio event loop in the test thread, and
    # Django refuses ORM calls from a thread with a running loop
    # (SynchronousOnlyOperation), e.g. live_server's database set-up and any test
    # data a browser test creates. It is safe here: the loop never runs while
    # Django code does. Set only while Playwright runs, so async tests elsewhere
    # keep Django's check (tests/conftest.py orders browser tests last).
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            yield playwright
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="session")
def browser(playwright_instance):
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} not found: browser tests need Debian's chromium "
            "(run `make browser`, i.e. apt-get install chromium)",
            pytrace=False,
        )
    browser = playwright_instance.chromium.launch(
        executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
    )
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture
def page(browser, live_server):
    context, page = _open_page(browser, live_server.url)
    try:
        yield page
    finally:
        context.close()


USER, PASSWORD = "ada", "analytical-engine-1843"


@pytest.fixture(scope="session")
def asgi_server(playwright_instance):
    from tests.browser import live_server

    server = live_server.start()
    try:
        yield server
    finally:
        server.stop()


def _open_page(browser, base_url: str):
    context = browser.new_context(base_url=base_url)
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    page = context.new_page()
    page.js_errors = []
    page.on(
        "console",
        lambda msg: page.js_errors.append(f"console.{msg.type}: {msg.text}")
        if msg.type == "error"
        else None,
    )
    page.on("pageerror", lambda exc: page.js_errors.append(f"pageerror: {exc}"))
    return context, page


def log_in(page, username: str = USER, password: str = PASSWORD) -> None:
    """Log in through the real login form."""
    page.goto("/accounts/login/?next=/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/")


@pytest.fixture
def asgi_page(browser, asgi_server, transactional_db, django_user_model):
    from allocation.services import cluster

    cluster.clear_cache()  # the database was flushed since the last test
    django_user_model.objects.create_user(USER, password=PASSWORD, is_staff=True)
    contexts = []

    def open_page():
        context, opened = _open_page(browser, asgi_server.url)
        contexts.append(context)
        return opened

    page = open_page()
    log_in(page)
    page.open_another = open_page
    try:
        yield page
    finally:
        for context in contexts:
            context.close()
        cluster.clear_cache()


@pytest.fixture
def services():
    """The services and the worker, called the way a browser test must (another thread)."""
    from allocation.services.manifests import import_texts
    from allocation.worker.loop import Worker
    from tests.browser.live_server import in_thread

    worker = Worker()
    return SimpleNamespace(
        import_texts=lambda texts: in_thread(import_texts, texts),
        reconcile=lambda: in_thread(worker.run_once),
    )
