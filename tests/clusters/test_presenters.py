"""clusters/presenters.py, views.py and the template tag: the dashboard's source line."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from clusters import services
from clusters.models import ClusterSource
from clusters.presenters import ago, source_view

pytestmark = pytest.mark.django_db


def test_ago():
    now = timezone.now()
    assert ago(None, now) == "never"
    assert ago(now - timedelta(seconds=3), now) == "3 s ago"
    assert ago(now - timedelta(minutes=5), now) == "5 min ago"
    assert ago(now - timedelta(hours=3), now) == "3 h ago"


def test_no_source_no_line():
    assert source_view() is None


def test_mirroring_and_failing():
    services.record_start("prod-eu", "https://k8s.example.com", ClusterSource.MIRRORING)
    now = timezone.now()
    ClusterSource.objects.update(last_event_at=now - timedelta(seconds=3))
    assert source_view(now).text == "mirroring context prod-eu, last event 3 s ago"
    services.record_error("watch pods: forbidden")
    ClusterSource.objects.update(error_since=now - timedelta(seconds=40))
    view = source_view(now)
    assert view.failing and view.error == "watch pods: forbidden"
    assert view.text.startswith("mirroring context prod-eu: failing since 40 s ago")
    services.record_error("watch pods: still forbidden")  # error_since stays the first
    assert source_view(now).text.startswith("mirroring context prod-eu: failing since 40 s")
    services.record_state(ClusterSource.MIRRORING)
    assert not source_view(now).failing and source_view(now).error == ""


def test_the_dashboard_shows_the_source(admin_client):
    assert b'id="cluster-source"' in admin_client.get("/dashboard/").content
    services.record_start("prod-eu", "https://k8s.example.com", ClusterSource.MIRRORING)
    page = admin_client.get("/dashboard/").content.decode()
    assert "mirroring context prod-eu, last event never" in page
    assert "k8s.example.com" not in page  # no server details, and never credentials
    fragment = admin_client.get("/cluster/source/")
    assert fragment.status_code == 200 and b"mirroring context prod-eu" in fragment.content
