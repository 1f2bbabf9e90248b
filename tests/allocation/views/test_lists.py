"""allocation.views.lists: searchable, sortable, paginated lists; flat query counts."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from allocation import models
from allocation.engine.constants import NODE_GROUP_LABEL
from allocation.services import reconcile as passes
from allocation.services.manifests import import_texts
from allocation.services.read_model import label_items
from tests import factories as f

pytestmark = pytest.mark.django_db

REASONS = ["0/N nodes are available: N cannot allocate all claims.",
           "0/N nodes are available: N node(s) didn't match Pod's node affinity/selector.",
           "not tried by the scheduler yet"]


def rows(nodes: int, pods_per_node: int = 2) -> None:
    """Read-model rows of a cluster of ``nodes`` nodes, written directly (no engine)."""
    models.NodeSummary.objects.bulk_create([models.NodeSummary(
        position=i, name=f"node-{i:05d}", node_group=f"group-{i % 4}",
        labels=label_items({NODE_GROUP_LABEL: f"group-{i % 4}", "zone": f"z{i % 3}"}),
        pods=pods_per_node, cpu_used_milli=1000, cpu_total_milli=8000, devices_used=i % 9,
        devices_total=8, in_use_percent=100 * (i % 9) // 8, drivers=",gpu.example.com,")
        for i in range(nodes)], batch_size=500)
    models.DeviceUsage.objects.bulk_create([models.DeviceUsage(
        node=f"node-{i:05d}", driver="gpu.example.com", model="partitionable",
        unit="partitions", used=i % 9, total=8) for i in range(nodes)], batch_size=500)
    pods = []
    for i in range(nodes * pods_per_node):
        bound = i % 5 != 0
        pods.append(models.PodSummary(
            position=i, namespace="default", name=f"pod-{i:06d}",
            status="Scheduled" if bound else "Unschedulable",
            node=f"node-{i // pods_per_node:05d}" if bound else "",
            reason="" if bound else REASONS[i % 3], labels=",app=train,",
            claims=f",pod-{i:06d}-gpu,"))
    models.PodSummary.objects.bulk_create(pods, batch_size=500)
    models.ClaimSummary.objects.bulk_create([models.ClaimSummary(
        position=i, namespace="default", name=f"pod-{i:06d}-gpu",
        api_version="resource.k8s.io/v1", state="Reserved" if i % 5 else "Pending",
        classes=",gpu,", drivers=",gpu.example.com,", node="", held=1)
        for i in range(nodes * pods_per_node)], batch_size=500)


def _table_rows(html: str) -> list[str]:
    body = html.split("<tbody", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r'<tr[^>]*>\s*<td ><a href="/(?:nodes|pods|claims)/[^"]+">([^<]+)</a>',
                      body)


def test_nodes_list_pages_sorts_and_filters(admin_client):
    rows(120)

    first = admin_client.get("/nodes/").content.decode()
    second = admin_client.get("/nodes/", {"page": 2}).content.decode()
    by_group = admin_client.get("/nodes/", {"node_group": "group-1"}).content.decode()
    by_label = admin_client.get("/nodes/", {"label": "zone=z2", "sort": "-name"}).content.decode()
    search = admin_client.get("/nodes/", {"q": "0011"}).content.decode()

    assert _table_rows(first)[:2] == ["node-00000", "node-00001"]
    assert len(_table_rows(first)) == 50 and "page 1 of 3" in first
    assert _table_rows(second)[0] == "node-00050"
    assert '<span class="count">30</span>' in by_group
    assert all(int(n[-5:]) % 4 == 1 for n in _table_rows(by_group))
    assert _table_rows(by_label)[0] == "node-00119"  # sorted by name, descending
    assert all(int(n[-5:]) % 3 == 2 for n in _table_rows(by_label))
    assert _table_rows(search) == ["node-00011", *(f"node-0011{i}" for i in range(10))]


def test_pods_list_filters_by_status_reason_and_node(admin_client):
    rows(10)

    pending = admin_client.get("/pods/", {"status": "Unschedulable"}).content.decode()
    reason = admin_client.get("/pods/", {"reason": REASONS[2]}).content.decode()
    on_node = admin_client.get("/pods/", {"node": "node-00003"}).content.decode()

    assert '<span class="count">4</span>' in pending
    # The one status vocabulary's badge: an unschedulable pod is *pending*, a scheduled one
    # *bound* (allocation/presenters/status.py).
    assert pending.count('data-status="pod:pending"') == 4 and "pod:bound" not in pending
    assert 'data-status="pod:bound"' in on_node
    assert _table_rows(reason) == ["default/pod-000005"]
    assert _table_rows(on_node) == ["default/pod-000006", "default/pod-000007"]


def test_claims_and_events_lists(admin_client):
    import_texts([("a.yaml", f.to_yaml([
        f.node("n1"), f.named_slice("n1", [f.device("d0")]), f.resource_class(),
        f.claim("c1"), f.pod("p1", claims={"gpu": "c1"}), f.pod("stuck", node_selector={
            "no": "where"})]))])
    passes.reconcile()

    claims = admin_client.get("/claims/", {"class": "gpu", "status": "Reserved"}).content
    events = admin_client.get("/events/", {"status": "Warning"}).content.decode()

    assert _table_rows(claims.decode()) == ["default/c1"]
    assert 'data-status="claim:reserved"' in claims.decode()
    assert "FailedScheduling" in events and '<a href="/pods/default/stuck/">' in events
    assert "Scheduled" not in events.split("<tbody", 1)[1]


def test_a_list_needs_a_signed_in_user(client):
    assert client.get("/nodes/").status_code == 302


PAGES = [("/dashboard/", {}), ("/nodes/", {}), ("/pods/", {}),
         ("/pods/", {"q": "pod-0000", "status": "Unschedulable", "sort": "-name"}),
         ("/nodes/", {"node_group": "group-2", "label": "zone=z1", "page": 2}),
         ("/claims/", {"class": "gpu"}), ("/events/", {}),
         ("/api/pods/", {"status": "Unschedulable"}), ("/api/nodes/", {"limit": 100})]


def _queries(client) -> list[int]:
    counts = []
    for url, query in PAGES:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url, query).status_code == 200, url
        counts.append(len(captured))
    return counts


def test_the_query_count_stays_flat_from_100_to_5000_nodes(admin_client,
                                                           django_assert_max_num_queries):
    rows(100)
    small = _queries(admin_client)
    for model in models.READ_MODELS:
        model.objects.all().delete()
    rows(5000)

    with django_assert_max_num_queries(sum(small)):
        large = _queries(admin_client)

    assert large == small, (small, large)


def test_the_dashboard_summarises_the_overview_of_5000_nodes(admin_client):
    rows(100)
    small = admin_client.get("/dashboard/").content.decode()
    for model in models.READ_MODELS:
        model.objects.all().delete()
    rows(5000)

    large = admin_client.get("/dashboard/").content.decode()

    assert small.count('class="overview"') == 4 and "overview-bands" not in small  # a cell each
    assert 'href="/nodes/node-00042/" class="u' in small
    assert "/nodes/node-0" not in large and large.count('class="overview-bands"') == 4
    assert 'href="/nodes/?sort=-in_use_percent&amp;node_group=group-2"' in large
    assert '<span class="count">5000</span>' in large
    assert len(large) < len(small) + 2000  # the page does not grow with the nodes
