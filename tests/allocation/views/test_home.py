"""allocation.views.home: the landing page (signed-in users only)."""

from __future__ import annotations

import pytest
from django.urls import reverse


@pytest.mark.django_db
def test_home_page_renders(admin_client):
    response = admin_client.get(reverse("allocation:home"))

    assert response.status_code == 200
    assert [t.name for t in response.templates][:2] == ["allocation/home.html", "base.html"]
    html = response.content.decode()
    assert "<h1>DRA Planner</h1>" in html
    assert "Simulate from the command line" in html
    assert "python manage.py simulate examples/quickstart.yaml" in html
    assert "vendor/htmx.min.js" in html
    assert "vendor/htmx-ext-ws.min.js" in html
    assert "css/console.css" in html
    assert 'href="/dashboard/"' in html


def test_home_is_the_site_root():
    assert reverse("allocation:home") == "/"


@pytest.mark.django_db
def test_anonymous_visitors_are_sent_to_the_login_page(client):
    response = client.get(reverse("allocation:home"))

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/"


@pytest.mark.django_db
def test_login_page_renders(client):
    response = client.get(reverse("login"))

    assert response.status_code == 200
    assert "registration/login.html" in [t.name for t in response.templates]
    assert 'name="password"' in response.content.decode()
