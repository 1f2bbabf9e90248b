"""Binding a pod (``allocation/engine/scheduling/binding.py``)."""

from __future__ import annotations

from allocation.engine.events import VirtualClock
from allocation.engine.manifests import load_texts
from allocation.engine.scheduling import binding, fit
from allocation.engine.scheduling.needs import Plans, no_negotiation, pod_needs
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
    """A pod with a claim allocated already (on n1, reserved for nobody) and a pending one."""
    held = claim("held", params="any", status={
        "driverName": "cards.dra.example.com", "allocation": {"resourceHandles": [{
            "driverName": "cards.dra.example.com", "structuredData": {
                "nodeName": "n1", "namedResourcesWithAttributes": {
                    "resources": [{"id": "gpu-0"}]}}}]}})
    held["metadata"]["finalizers"] = ["structured.dra.k8s.io/delete-protection"]
    docs = [node("n1"), named_slice("n1", [device("gpu-0"), device("gpu-1")]),
            resource_class("gpu"), claim_parameters("any", "true"), held,
            claim("new", params="any"), pod("p", claims={"a": "held", "b": "new"})]
    return ClusterState.build(load_texts([("t.yaml", to_yaml(docs))]), VirtualClock())


def _placed(separately: bool) -> ClusterState:
    """The state after binding ``p`` on n1 by ``commit``, or by its steps one by one as
    before (allocate each pending claim, reserve every claim, bind)."""
    state = _state()
    state.touched.clear()
    p, n1 = state.get("Pod", "default", "p"), state.nodes["n1"]
    needs = pod_needs(state, p, Plans(), no_negotiation)
    assert [c.name for c in needs.allocated] == ["held"]
    assert [c.name for c, _plan in needs.pending] == ["new"]
    picks, refusal = fit.try_node(state, p, n1, needs, "first-fit")
    assert refusal is None
    if not separately:
        binding.commit(state, p, n1, needs, picks)
        return state
    for (claim_, plan), pick in zip(needs.pending, picks, strict=True):
        binding.allocate(state, claim_, plan, n1.name, [pick])
    for claim_ in [*needs.allocated, *(c for c, _plan in needs.pending)]:
        binding.reserve(state, claim_, p)
    binding.bind(state, p, n1)
    return state


def test_commit_makes_each_object_writable_once_with_what_its_steps_made():
    """``commit`` makes the pod and each claim writable once (each ``writable`` is a touch
    every quiet memo reads), and leaves the objects and Events its steps one by one left."""
    state, before = _placed(separately=False), _placed(separately=True)
    pod_key = state.get("Pod", "default", "p").key
    held = state.get("ResourceClaim", "default", "held").key
    new = state.get("ResourceClaim", "default", "new").key
    assert state.touched == [pod_key, new, held]
    assert [o.to_manifest() for o in state.all_objects()] == [
        o.to_manifest() for o in before.all_objects()]
    assert state.events.items == before.events.items
    assert [e["reason"] for e in state.events.items] == ["Allocated", "Scheduled"]
    claim_ = state.get("ResourceClaim", "default", "new")
    assert claim_.reserved_pods() == ["p"] and claim_.allocation.node_name == "n1"


def test_commit_in_a_fork_changes_the_forks_copies_only():
    """In a fork the pod and claims are the fork's own copies (``writable``); the parent's
    objects stay as they were."""
    parent = _state()
    state = parent.fork()
    p, n1 = state.get("Pod", "default", "p"), state.nodes["n1"]
    needs = pod_needs(state, p, Plans(), no_negotiation)
    picks, _refusal = fit.try_node(state, p, n1, needs, "first-fit")
    binding.commit(state, p, n1, needs, picks)
    assert state.get("Pod", "default", "p").node_name == "n1"
    assert parent.get("Pod", "default", "p").node_name is None
    assert state.get("ResourceClaim", "default", "new").reserved_pods() == ["p"]
    assert parent.get("ResourceClaim", "default", "new").allocation is None
    assert parent.get("ResourceClaim", "default", "new").reserved_for == []
    assert parent.get("ResourceClaim", "default", "held").reserved_for == []



def test_allocations_on_one_node_give_documents_of_their_own():
    """Allocations on one node share its ``availableOnNodes`` selector (made once per node);
    each claim's document is its own: changing one leaves the other's as it was."""
    docs = [node("n1"), named_slice("n1", [device("gpu-0"), device("gpu-1")]),
            resource_class("gpu"), claim_parameters("any", "true"),
            claim("a", params="any"), claim("b", params="any"),
            pod("p", claims={"a": "a", "b": "b"})]
    state = ClusterState.build(load_texts([("t.yaml", to_yaml(docs))]), VirtualClock())
    p, n1 = state.get("Pod", "default", "p"), state.nodes["n1"]
    needs = pod_needs(state, p, Plans(), no_negotiation)
    picks, _refusal = fit.try_node(state, p, n1, needs, "first-fit")
    binding.commit(state, p, n1, needs, picks)
    first, second = (state.get("ResourceClaim", "default", name).to_manifest()
                     for name in ("a", "b"))
    selector = {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    assert first["status"]["allocation"]["availableOnNodes"] == selector
    assert second["status"]["allocation"]["availableOnNodes"] == selector
    first["status"]["allocation"]["availableOnNodes"]["nodeSelectorTerms"].clear()
    assert state.get("ResourceClaim", "default", "b").to_manifest()[
        "status"]["allocation"]["availableOnNodes"] == selector
