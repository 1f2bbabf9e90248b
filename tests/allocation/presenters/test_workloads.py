"""allocation.presenters.workloads: claim, pod and ProvisioningRequest pages' data."""

from __future__ import annotations

from allocation.presenters.workloads import claim_view, pod_view, provisioning_view
from tests.allocation.presenters.docs import cluster_state
from tests.factories import node, pod, run


def test_allocated_claim_with_items_and_reservation() -> None:
    view = claim_view(cluster_state(), "default", "net")

    assert view.state == "reserved"
    assert (view.class_name, view.class_mode) == ("vfs", "numeric")
    assert (view.node, view.node_url) == ("gpu-node", "/nodes/gpu-node/")
    assert [(i.driver, i.model, i.id, i.count) for i in view.items] == [
        ("nic.example.com", "counter", "vf", 3)]
    assert view.reserved_for == [("net-user", "/pods/default/net-user/")]
    assert view.parameters == "Vfs three"
    assert [e.reason for e in view.events] == ["Allocated"]


def test_pending_claim_names_the_pods_waiting_for_it() -> None:
    view = claim_view(cluster_state(), "default", "huge-card")

    assert view.state == "pending"
    assert view.items == [] and view.node is None
    assert view.waiting_pods == [("waiting", "/pods/default/waiting/")]


def test_pending_pod_with_explanation_and_claims() -> None:
    view = pod_view(cluster_state(), "default", "waiting")

    assert view.phase == "Pending" and view.node is None
    assert view.reason == "0/2 nodes are available: 2 cannot allocate all claims."
    assert view.explanation is not None
    assert [n.node for n in view.explanation.nodes] == ["card-node", "gpu-node"]
    assert [(c.pod_claim, c.claim, c.state) for c in view.claims] == [
        ("card", "huge-card", "pending")]
    assert [c.type for c in view.conditions] == ["PodScheduled"]
    assert "draplanner.io/explain" not in view.annotations
    assert [e.reason for e in view.events] == ["FailedScheduling"]


def test_a_gated_pod_and_another_schedulers_pod_say_why_nothing_placed_them() -> None:
    gated, other = pod("gated"), pod("other")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/quota"}, {"name": "b"}]
    other["spec"]["schedulerName"] = "volcano"
    state = run([node("n"), gated, other]).state

    view = pod_view(state, "default", "gated")
    assert view.scheduling_gates == ["example.com/quota", "b"] and view.scheduler is None
    assert view.reason == "Scheduling is blocked due to non-empty scheduling gates"
    assert view.explanation is None and view.diagnosis is None  # no node was tried
    view = pod_view(state, "default", "other")
    assert view.scheduler == "volcano" and view.scheduling_gates == []
    assert view.reason == ("left to scheduler 'volcano': the planner simulates "
                           "kube-scheduler ('default-scheduler'), which does not schedule it")


def test_bound_pod_has_no_explanation() -> None:
    view = pod_view(cluster_state(), "default", "card-user")

    assert (view.node, view.node_url) == ("card-node", "/nodes/card-node/")
    assert view.reason is None and view.explanation is None
    assert view.claims[0].state == "reserved"
    assert view.timeline is None


def _provisioning_docs() -> list[dict]:
    template = {"apiVersion": "v1", "kind": "PodTemplate",
                "metadata": {"name": "worker", "namespace": "default"},
                "template": {"spec": pod("x", cpu="1", memory="1Gi")["spec"]}}
    request = {"apiVersion": "autoscaling.x-k8s.io/v1", "kind": "ProvisioningRequest",
               "metadata": {"name": "batch", "namespace": "default"},
               "spec": {"provisioningClassName": "check-capacity.kubernetes.io",
                        "podSets": [{"podTemplateRef": {"name": "worker"}, "count": 2},
                                    {"podTemplateRef": {"name": "missing"}, "count": 1}]}}
    return [node("n"), template, request]


def test_provisioning_request_with_pod_sets_and_conditions() -> None:
    state = run(_provisioning_docs()).state

    view = provisioning_view(state, "default", "batch")

    assert view.class_name == "check-capacity.kubernetes.io"
    assert view.canonical_class == "check-capacity.autoscaling.x-k8s.io"
    assert [(s.template, s.count, s.exists) for s in view.pod_sets] == [
        ("worker", 2, True), ("missing", 1, False)]
    assert view.pod_sets[0].requests == "cpu 1, memory 1Gi"
    # Whatever the autoscaler decided, each condition is shown with its reason.
    assert all(c.reason for c in view.conditions)
    assert len(view.conditions) == len(state.get("ProvisioningRequest", "default",
                                                 "batch").conditions)


def test_missing_objects_are_none() -> None:
    state = cluster_state()
    assert claim_view(state, "default", "nope") is None
    assert pod_view(state, "default", "nope") is None
    assert provisioning_view(state, "default", "nope") is None
