"""Logging in through the real login page (also exercises ORM use next to Playwright)."""

import pytest

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
    page.wait_for_load_state("load")
    assert page.get_by_role("link", name="Log in").is_visible()
    assert page.js_errors == []


def test_wrong_password_is_refused(page, django_user_model):
    django_user_model.objects.create_user(username="ada", password="analytical-engine-1843")

    page.goto("/accounts/login/")
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Log in").click()

    assert page.get_by_text("didn't match").is_visible()
