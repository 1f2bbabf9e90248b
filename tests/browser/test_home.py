"""The home page in a real browser: it renders and htmx loads."""

import pytest

pytestmark = pytest.mark.browser


def test_home_page_shows_heading_and_loads_htmx(page, live_server):
    response = page.goto(live_server.url + "/")

    assert response is not None and response.status == 200
    heading = page.get_by_role("heading", level=1)
    assert heading.inner_text() == "DRA Planner"
    assert heading.is_visible()
    page.wait_for_load_state("load")  # htmx.min.js is deferred
    assert page.evaluate("typeof htmx") == "object"
    assert page.evaluate("htmx.version").startswith("2.")
    assert page.js_errors == []
