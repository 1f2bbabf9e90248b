"""Logging in through the real login page (also exercises ORM use next to Playwright)."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_user_can_log_in_and_out(page, django_user_model):
    django_user_model.objects.create_user(username="ada", password="analytical-engine-1843")

    page.goto("/accounts/login/?next=/")
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill("analytical-engine-1843")
    page.get_by_role("button", name="Log in").click()

    page.wait_for_url("**/")
    assert page.locator(".site-nav .user").inner_text() == "ada"

    page.get_by_role("button", name="Log out").click()
    # A click returns once the form is submitted, not when the next page is shown: wait for
    # what a person would wait for.
    expect(page.get_by_role("link", name="Log in")).to_be_visible()
    assert page.js_errors == []


def test_wrong_password_is_refused(page, django_user_model):
    django_user_model.objects.create_user(username="ada", password="analytical-engine-1843")

    page.goto("/accounts/login/")
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Log in").click()

    expect(page.get_by_text("didn't match")).to_be_visible()
    expect(page.get_by_role("heading", level=1)).to_have_text("Log in")
