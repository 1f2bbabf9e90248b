"""A mirrored cluster in a real browser: the source's status on the dashboard, and a change
on the (fixture) cluster arriving on the open page without reload (docs/live-cluster.md)."""

from __future__ import annotations

import threading
import time

import pytest
from playwright.sync_api import expect

from tests.clusters.objects import pod, small_cluster
from tests.kube_server import FakeApiServer, write_kubeconfig

pytestmark = pytest.mark.browser


def test_the_dashboard_follows_a_mirrored_cluster(asgi_page, services, tmp_path):
    from allocation.models import Pod
    from clusters.kube.client import connect
    from clusters.mirror import Mirror
    from clusters.models import ClusterSource

    with FakeApiServer(bookmark_seconds=0.1) as fake:
        fake.put_all(small_cluster())
        mirror = Mirror(connect(str(write_kubeconfig(tmp_path / "kc", fake.url))),
                        batch_seconds=0.05, watch_seconds=1)
        thread = threading.Thread(target=mirror.run, daemon=True)
        thread.start()
        try:
            deadline = time.monotonic() + 60
            while not ClusterSource.objects.filter(state=ClusterSource.MIRRORING).exists():
                assert time.monotonic() < deadline and thread.is_alive()
                time.sleep(0.05)
            asgi_page.goto("/dashboard/")
            expect(asgi_page.locator(".live")).to_have_attribute("data-socket", "open")
            expect(asgi_page.get_by_test_id("source-text")).to_contain_text(
                "mirroring context prod-eu, last event")
            expect(asgi_page.locator('[data-pod="default/late"]')).to_have_count(0)

            # a pod no node can take: the dashboard lists pending pods (grouped by reason)
            fake.put(pod("late", cpu="1000"))
            while not Pod.objects.filter(namespace="default", name="late").exists():
                assert time.monotonic() < deadline + 60 and thread.is_alive()
                time.sleep(0.05)
            services.reconcile()  # the worker's pass writes the rows the dashboard reads

            expect(asgi_page.locator('[data-pod="default/late"]')).to_have_count(
                1, timeout=30_000)
            assert asgi_page.js_errors == []
        finally:
            mirror.stop.set()
            thread.join(30)
    assert not thread.is_alive()
