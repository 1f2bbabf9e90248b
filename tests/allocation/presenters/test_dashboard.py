"""allocation.presenters.dashboard: what the dashboard shows, read from the read model."""

from __future__ import annotations

import pytest

from allocation.engine.constants import NODE_GROUP_LABEL
from allocation.engine.objects import Pod
from allocation.presenters import dashboard as dashboard_module
from allocation.presenters.dashboard import PODS_PER_REASON, dashboard
from allocation.services import reconcile as passes
from allocation.services.manifests import import_texts
from allocation.services.read_model import NOT_TRIED, pending_reason
from tests import factories as f
from tests.allocation.presenters.docs import cluster_docs

pytestmark = pytest.mark.django_db


@pytest.fixture
def settled():
    import_texts([("a.yaml", f.to_yaml(cluster_docs()))])
    assert passes.reconcile().outcome == passes.SAVED


def test_pending_pods_are_grouped_by_the_schedulers_reason(settled) -> None:
    view = dashboard()

    [group] = view.pending
    assert (group.reason, group.count) == (
        "0/2 nodes are available: 2 cannot allocate all claims.", 2)
    assert group.pods == [("default/full-user", "/pods/default/full-user/"),
                          ("default/waiting", "/pods/default/waiting/")]
    assert group.url.startswith("/pods/?reason=0%2F2+nodes")
    assert (view.pending_total, view.bound_pods) == (2, 3)


def test_usage_per_driver_and_model_and_per_class(settled) -> None:
    view = dashboard()

    usage = {(u.driver, u.model): (u.allocated, u.free, u.unit) for u in view.usage}
    assert usage == {
        ("cards.dra.example.com", "namedResourcesWithAttributes"): (1, 1, "devices"),
        ("gpu.example.com", "partitionable"): (1, 2, "partitions"),
        ("nic.example.com", "counter"): (3, 1, "units"),
    }
    classes = {c.name: (c.mode, c.allocated, c.pending, c.held) for c in view.classes}
    assert classes == {"cards": ("structured", 1, 1, 1), "mig": ("structured", 1, 1, 1),
                       "vfs": ("numeric", 1, 0, 3)}
    assert (view.claims_allocated, view.claims_total) == (3, 5)


def test_overview_has_a_cell_per_node_and_recent_events_newest_first(settled) -> None:
    view = dashboard(recent=3)

    [group] = view.overview
    cells = {c.name: (c.url, c.percent, c.step) for c in group.cells}
    # gpu-node: 1/3 partitions + 3/4 units = 4 of 7 in use
    assert cells == {"card-node": ("/nodes/card-node/", 50, 3),
                     "gpu-node": ("/nodes/gpu-node/", 57, 3)}
    assert len(view.events) == 3
    assert view.events[0].reason == "FailedScheduling"  # the last thing that happened


def test_overview_groups_by_node_group_or_a_chosen_label(db) -> None:
    docs = [f.node("a1", labels={NODE_GROUP_LABEL: "ga", "zone": "z1"}),
            f.node("b1", labels={"zone": "z2"}), f.node("b2", labels={"zone": "z1"})]
    import_texts([("a.yaml", f.to_yaml(docs))])
    passes.reconcile()

    by_group = {g.name: [c.name for c in g.cells] for g in dashboard().overview}
    by_zone = {g.name: [c.name for c in g.cells] for g in dashboard(group_by="zone").overview}

    assert by_group == {"ga": ["a1"], "": ["b1", "b2"]}
    assert by_zone == {"z1": ["a1", "b2"], "z2": ["b1"]}


def test_above_overview_cells_each_group_is_summarised_per_step(db, monkeypatch) -> None:
    docs = [f.node("a1", labels={NODE_GROUP_LABEL: "ga", "zone": "z1"}),
            f.node("a2", labels={NODE_GROUP_LABEL: "ga", "zone": "z2"}),
            f.node("b1", labels={"zone": "z1"}, unschedulable=True), *cluster_docs()]
    import_texts([("a.yaml", f.to_yaml(docs))])
    passes.reconcile()
    drawn = dashboard()
    monkeypatch.setattr(dashboard_module, "OVERVIEW_CELLS", 4)  # five nodes: summarised

    view = dashboard()

    assert view.overview_summarised and not drawn.overview_summarised
    assert all(not g.cells for g in view.overview)
    assert view.nodes_total == drawn.nodes_total == 5
    for summary, cells in zip(view.overview, drawn.overview, strict=True):
        assert summary.name == cells.name
        assert summary.steps == [sum(c.step == s for c in cells.cells) for s in range(6)]
        assert summary.cordoned == sum(c.cordoned for c in cells.cells)
    groups = {g.name: (g.steps, g.cordoned, g.url) for g in view.overview}
    assert groups["ga"] == ([2, 0, 0, 0, 0, 0], 0,
                            "/nodes/?sort=-in_use_percent&node_group=ga")
    assert groups[""][:2] == ([1, 0, 0, 2, 0, 0], 1)  # b1; gpu-node 57%, card-node 50%
    by_zone = {g.name: g.url for g in dashboard(group_by="zone").overview}
    assert by_zone["z1"] == "/nodes/?sort=-in_use_percent&label=zone%3Dz1"
    assert by_zone[""] == "/nodes/?sort=-in_use_percent"  # without zone: every node


def test_a_reason_group_lists_a_few_pods_and_links_the_rest(db) -> None:
    pods = [f.pod(f"p{i:03d}", node_selector={"no": "where"}) for i in range(30)]
    import_texts([("a.yaml", f.to_yaml([f.node("n1"), *pods]))])
    passes.reconcile()

    [group] = dashboard().pending

    assert group.count == 30 and len(group.pods) == PODS_PER_REASON
    assert group.pods[0] == ("default/p000", "/pods/default/p000/")


def test_a_pod_not_tried_yet_says_so() -> None:
    assert pending_reason(Pod(f.pod("p"))) == NOT_TRIED == "not tried by the scheduler yet"


def test_a_node_group_counts_the_nodes_carrying_its_label(db) -> None:
    group = {"apiVersion": "draplanner.io/v1alpha1", "kind": "NodeGroup",
             "metadata": {"name": "pool"},
             "spec": {"minSize": 0, "maxSize": 3, "template": {"status": {"allocatable": {
                 "cpu": "8", "memory": "32Gi", "pods": "110"}}}},
             "status": {"nodes": ["stale-1", "stale-2", "stale-3"]}}  # lags: not counted
    docs = [f.node("p1", labels={NODE_GROUP_LABEL: "pool"}),
            f.node("p2", labels={NODE_GROUP_LABEL: "pool"}), f.node("other"), group]
    import_texts([("a.yaml", f.to_yaml(docs))])
    passes.reconcile()

    [row] = dashboard().node_groups

    # The same count as group_nodes and the nodes' group badges (by label).
    assert (row.name, row.nodes, row.min_size, row.max_size) == ("pool", 2, 0, 3)
    assert row.url == "/nodes/?node_group=pool"


def _pending_rows(reasons: int, per_reason: int) -> None:
    from allocation.models import PodSummary

    PodSummary.objects.bulk_create([PodSummary(
        position=i, namespace="default", name=f"p{i:05d}", status="Unschedulable",
        reason=f"reason {i % reasons:02d}") for i in range(reasons * per_reason)])


def test_the_pending_groups_cost_the_same_queries_however_many_reasons(
        django_assert_max_num_queries) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from allocation.models import PodSummary
    from allocation.presenters.dashboard import REASON_GROUPS

    _pending_rows(1, 3)
    with CaptureQueriesContext(connection) as one:
        dashboard()
    PodSummary.objects.all().delete()
    _pending_rows(REASON_GROUPS + 5, PODS_PER_REASON + 2)

    with django_assert_max_num_queries(len(one)):
        view = dashboard()

    assert len(view.pending) == REASON_GROUPS and view.pending_other == 5 * (PODS_PER_REASON + 2)
    first = view.pending[0]  # every group holds 22 pods: by reason then
    assert first.reason == "reason 00" and len(first.pods) == PODS_PER_REASON
    step = REASON_GROUPS + 5
    assert [name for name, _url in first.pods] == [
        f"default/p{i * step:05d}" for i in range(PODS_PER_REASON)]
