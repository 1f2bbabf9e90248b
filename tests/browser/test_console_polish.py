"""The console's common parts in Chromium, as a person sees them: the live indicator's
words, the navigation at phone width, dark mode, links only for those who may use them,
and where signing in lands (``templates/base.html``, ``static/css/console.css``,
``static/js/live.js``)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import PASSWORD, USER, log_in

pytestmark = pytest.mark.browser


def test_the_live_indicator_says_live_then_offline_when_the_socket_closes(asgi_page):
    page = asgi_page
    sockets = []

    def through(ws):  # the page's socket, passed to the server and kept for closing
        sockets.append(ws)  # first: the page may show "Live" before connecting returns
        ws.connect_to_server()

    page.route_web_socket(re.compile(r".*/ws/pages/.*"), through)
    page.goto("/dashboard/")
    state = page.locator("#live-status .socket-state")
    expect(state).to_have_text("Live")
    sockets[0].close(code=1000, reason="server gone")  # a close the page does not retry
    expect(state).to_have_text("offline")
    expect(page.locator(".live")).to_have_attribute("data-socket", "closed")


def test_the_live_indicator_says_reconnecting_until_the_socket_is_back(asgi_page):
    """An abnormal close (here 1012, "service restart") is retried by the ws extension after
    a random back-off; the page's clock is held, so the retry waits until the test has read
    the words, then runs the clock on to let it happen."""
    page = asgi_page
    sockets = []

    def through(ws):
        sockets.append(ws)  # first: the page may show "Live" before connecting returns
        ws.connect_to_server()

    page.clock.install()
    page.route_web_socket(re.compile(r".*/ws/pages/.*"), through)
    page.goto("/dashboard/")
    state = page.locator("#live-status .socket-state")
    expect(state).to_have_text("Live")
    page.clock.pause_at(page.evaluate("Date.now()") / 1000 + 1)  # seconds
    sockets[0].close(code=1012, reason="restarting")
    expect(state).to_have_text("reconnecting")
    expect(page.locator(".live")).to_have_attribute("data-socket", "reconnecting")
    assert len(sockets) == 1  # no new socket while the clock is held

    page.clock.run_for(2000)  # the first retry waits at most a second
    expect(state).to_have_text("Live")
    assert len(sockets) == 2


def test_the_live_indicator_says_offline_when_the_browser_is(asgi_page):
    page = asgi_page
    page.goto("/dashboard/")
    state = page.locator("#live-status .socket-state")
    expect(state).to_have_text("Live")
    page.context.set_offline(True)
    expect(state).to_have_text("offline")
    page.context.set_offline(False)
    expect(state).not_to_have_text("offline")


def _make_user(django_user_model, staff: bool):
    django_user_model.objects.create_user(USER, password=PASSWORD, is_staff=staff)


def test_the_navigation_fits_a_phone(page, django_user_model):
    _make_user(django_user_model, staff=True)
    page.set_viewport_size({"width": 375, "height": 740})
    log_in(page)
    for url in ("/", "/dashboard/", "/scenarios/"):
        page.goto(url)
        assert page.evaluate("document.documentElement.scrollWidth") <= 375, url
        nav = page.locator(".site-nav")
        box = nav.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 375, url
        for link in nav.get_by_role("link").all():
            link_box = link.bounding_box()
            assert link_box["x"] + link_box["width"] <= 375, (url, link.inner_text())


def test_dark_mode_follows_the_system_setting(page, django_user_model):
    _make_user(django_user_model, staff=True)
    log_in(page)
    background = "getComputedStyle(document.documentElement).backgroundColor"
    text = "getComputedStyle(document.documentElement).color"
    page.emulate_media(color_scheme="light")
    page.goto("/dashboard/")
    assert page.evaluate(background) == "rgb(255, 255, 255)"
    page.emulate_media(color_scheme="dark")
    assert page.evaluate(background) == "rgb(13, 17, 23)"
    assert page.evaluate(text) == "rgb(230, 237, 243)"


def test_non_staff_users_do_not_see_upload(page, django_user_model):
    _make_user(django_user_model, staff=False)
    log_in(page)
    for url in ("/", "/dashboard/"):
        page.goto(url)
        assert page.get_by_role("link", name=re.compile("Upload")).count() == 0, url
    expect(page.get_by_role("link", name="Dashboard")).to_be_visible()
    # Typing the hidden page's address does not get them in either.
    response = page.goto("/upload/")
    assert response.status == 403
    expect(page.get_by_role("heading", name="Not allowed")).to_be_visible()
    expect(page.locator("main")).to_contain_text("Only staff upload manifests")
    assert page.get_by_role("button", name="Import").count() == 0
    assert page.locator("textarea").count() == 0


def test_staff_users_see_upload(page, django_user_model):
    _make_user(django_user_model, staff=True)
    log_in(page)
    expect(page.locator(".site-nav").get_by_role("link", name="Upload")).to_be_visible()


def test_signing_in_lands_on_the_dashboard(page, django_user_model):
    _make_user(django_user_model, staff=False)
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(USER)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/dashboard/")
    expect(page.locator("h1")).to_have_text("Cluster dashboard")


def test_the_demos_pages_fit_a_phone(asgi_page, services):
    """Not only the navigation: the pages with the widest content (a long selector in the
    pod page's explanation, a claim's facts, the what-if planner with its class names) stay
    within a phone's width; what cannot wrap scrolls inside itself."""
    from tests.browser.test_explanations import _demo, _stored

    _stored(services, _demo())
    page = asgi_page
    page.goto("/scenarios/")
    page.get_by_label("New scenario").fill("phone")
    page.get_by_role("button", name="Fork the cluster").click()
    page.wait_for_url("**/scenarios/*/")
    scenario = page.url
    page.set_viewport_size({"width": 375, "height": 740})
    for url in ("/pods/default/wide-render/", "/claims/default/trainer-gpu/",
                "/nodes/a100-1/", scenario):
        page.goto(url)
        expect(page.locator("h1")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 375, url
