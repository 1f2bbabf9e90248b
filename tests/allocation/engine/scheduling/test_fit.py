"""Fitting a pod on a node (``allocation/engine/scheduling/fit.py``)."""

from __future__ import annotations

from allocation.engine.events import VirtualClock
from allocation.engine.manifests import load_texts
from allocation.engine.scheduling import fit
from allocation.engine.scheduling.needs import Plans, no_negotiation, pod_needs
from allocation.engine.scheduling.reasons import R_CLAIMS, R_CPU, R_SELECTOR, R_UNSCHEDULABLE
from allocation.engine.state import ClusterState
from tests.factories import (
    claim,
    claim_parameters,
    device,
    named_slice,
    node,
    pod,
    resource_class,
    to_yaml,
)


def _state() -> ClusterState:
    docs = [node("n1", {"rack": "a"}), node("n2"), named_slice("n1", [device("gpu-0")]),
            resource_class("gpu"), claim_parameters("any", "true"), claim("c1", params="any"),
            claim("c2", params="any"),
            pod("p1", claims={"gpu": "c1"}, node_selector={"rack": "a"}),
            pod("p2", claims={"gpu": "c2"})]
    return ClusterState.build(load_texts([("t.yaml", to_yaml(docs))]), VirtualClock())


def _needs(state: ClusterState, name: str):
    return pod_needs(state, state.get("Pod", "default", name), Plans(), no_negotiation)


def test_a_dry_run_leaves_nothing_taken_and_try_node_keeps_its_picks():
    state = _state()
    p1, p2 = state.get("Pod", "default", "p1"), state.get("Pod", "default", "p2")
    n1, n2 = state.nodes["n1"], state.nodes["n2"]
    needs1, needs2 = _needs(state, "p1"), _needs(state, "p2")
    assert fit.dry_run(state, p1, n2, needs1, "first-fit") == R_SELECTOR
    assert fit.dry_run(state, p1, n1, needs1, "first-fit") is None
    assert fit.dry_run(state, p2, n1, needs2, "first-fit") is None  # still free
    picks, refusal = fit.try_node(state, p1, n1, needs1, "first-fit")
    assert refusal is None and [c.id for _inventory, c in picks] == ["gpu-0"]
    assert fit.dry_run(state, p2, n1, needs2, "first-fit") == R_CLAIMS  # kept taken
    assert fit.claims_fit(state, n1, needs2.wants, "first-fit") == R_CLAIMS
    fit.release(needs1.wants, picks)
    assert fit.claims_fit(state, n1, needs2.wants, "first-fit") is None


def test_a_node_detail_explains_requests_only_when_claims_failed():
    state = _state()
    needs = _needs(state, "p2")
    n1 = state.nodes["n1"]
    assert fit.node_detail(state, n1, needs, R_SELECTOR, "first-fit") == {
        "node": "n1", "reason": R_SELECTOR}
    assert "requests" in fit.node_detail(state, n1, needs, R_CLAIMS, "first-fit")


def _tainted_state(*pods: dict) -> ClusterState:
    cordoned = node("a-cordoned", unschedulable=True)
    cordoned["spec"]["taints"] = [{"key": "k", "effect": "NoSchedule"}]
    tainted = node("b-tainted", {"rack": "b"})
    tainted["spec"] = {"taints": [{"key": "soft", "effect": "PreferNoSchedule"},
                                  {"key": "gpu", "value": "yes", "effect": "NoSchedule"}]}
    return ClusterState.build(load_texts([("t.yaml", to_yaml([cordoned, tainted, *pods]))]),
                              VirtualClock())


def _tolerating(name: str, tolerations: list[dict], **kwargs) -> dict:
    doc = pod(name, **kwargs)
    doc["spec"]["tolerations"] = tolerations
    return doc


def test_node_checks_run_in_kube_schedulers_filter_order():
    # NodeUnschedulable, TaintToleration, NodeAffinity: each node says its first refusal
    state = _tainted_state(pod("p", node_selector={"rack": "a"}),
                           _tolerating("t", [{"key": "gpu", "operator": "Exists"},
                                             {"key": "node.kubernetes.io/unschedulable",
                                              "operator": "Exists", "effect": "NoSchedule"}],
                                       node_selector={"rack": "a"}))
    cordoned, tainted = state.nodes["a-cordoned"], state.nodes["b-tainted"]
    p, t = state.get("Pod", "default", "p"), state.get("Pod", "default", "t")
    assert fit.node_refusal(state, p, cordoned, _needs(state, "p")) == R_UNSCHEDULABLE
    assert fit.node_refusal(state, p, tainted, _needs(state, "p")) == \
        "node(s) had untolerated taint {gpu: yes}"
    # the cordon tolerated, the node's own taint is next; then the selector
    assert fit.node_refusal(state, t, cordoned, _needs(state, "t")) == \
        "node(s) had untolerated taint {k: }"
    assert fit.node_refusal(state, t, tainted, _needs(state, "t")) == R_SELECTOR


def test_other_resources_are_checked_against_what_the_node_states():
    stated = node("a-stated")
    stated["status"]["allocatable"].update({"ephemeral-storage": "10Gi", "example.com/nic": "1"})
    silent = node("b-silent")  # says nothing of storage, hugepages or NICs
    asks = pod("p")
    asks["spec"]["containers"][0]["resources"] = {"requests": {
        "ephemeral-storage": "20Gi", "hugepages-2Mi": "1Gi"}}
    nic = pod("nic")
    nic["spec"]["containers"][0]["resources"] = {"limits": {"example.com/nic": "1"}}
    state = ClusterState.build(load_texts([("t.yaml", to_yaml([stated, silent, asks, nic]))]),
                               VirtualClock())
    p, n = state.get("Pod", "default", "p"), state.get("Pod", "default", "nic")
    stated, silent = state.nodes["a-stated"], state.nodes["b-silent"]
    assert fit.node_refusal(state, p, stated, _needs(state, "p")) == \
        "Insufficient ephemeral-storage"
    assert fit.node_refusal(state, p, silent, _needs(state, "p")) is None  # as cpu: unknown
    # an extended resource the node does not state is one it has none of
    assert fit.node_refusal(state, n, silent, _needs(state, "nic")) == \
        "Insufficient example.com/nic"
    assert fit.node_refusal(state, n, stated, _needs(state, "nic")) is None
    state.charge(n, "a-stated", 1)  # one pod already holds the node's one NIC
    assert fit.node_refusal(state, n, stated, _needs(state, "nic")) == \
        "Insufficient example.com/nic"


def test_a_pod_asking_for_no_cpu_fits_an_overcommitted_node():
    # NodeResourcesFit checks cpu and memory only for a pod that requests them
    state = ClusterState.build(load_texts([("t.yaml", to_yaml([node("n", cpu="1"),
                                                               pod("idle"),
                                                               pod("busy", cpu="1")]))]),
                               VirtualClock())
    state.charge(state.get("Pod", "default", "busy"), "n", 1)
    state.charge(state.get("Pod", "default", "busy"), "n", 1)  # 2 of 1 cpu in use
    n = state.nodes["n"]
    assert fit.node_refusal(state, state.get("Pod", "default", "idle"), n,
                            _needs(state, "idle")) is None
    assert fit.node_refusal(state, state.get("Pod", "default", "busy"), n,
                            _needs(state, "busy")) == R_CPU
