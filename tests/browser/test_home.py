"""The home page in a real browser: it renders for a signed-in user and htmx loads."""

import pytest

pytestmark = pytest.mark.browser


def test_home_page_shows_heading_and_loads_htmx(asgi_page):
    page = asgi_page
    response = page.goto("/")

    assert response is not None and response.status == 200
    heading = page.get_by_role("heading", level=1)
    assert heading.inner_text() == "DRA Planner"
    assert heading.is_visible()
    page.wait_for_load_state("load")  # htmx.min.js is deferred
    assert page.evaluate("typeof htmx") == "object"
    assert page.evaluate("htmx.version").startswith("2.")
    assert page.js_errors == []


def test_anonymous_visitor_is_asked_to_log_in(page, live_server):
    page.goto(live_server.url + "/")

    assert page.url.endswith("/accounts/login/?next=/")
    assert page.get_by_role("heading", level=1).inner_text() == "Log in"
