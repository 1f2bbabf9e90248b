"""The v1 claim controller's rules (``claims_v1.py``); whole simulations are in
``test_simulation_v1.py``."""

from __future__ import annotations

from allocation.engine.claims_v1 import V1ClaimController, owning_pod, pod_done
from allocation.engine.events import DEFAULT_START, VirtualClock
from allocation.engine.objects import Pod, ResourceClaimV1
from allocation.engine.state import ClusterState
from tests.allocation.engine.manifests.v1_docs import class_doc, device, load, request, slice_doc
from tests.factories import node, pod


def _pod(**status) -> Pod:
    raw = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}
    if "deleted" in status:
        raw["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    if "node" in status:
        raw["spec"]["nodeName"] = status["node"]
    if "phase" in status:
        raw["status"] = {"phase": status["phase"]}
    return Pod(raw)


def test_pod_done_is_upstreams_is_pod_done():
    assert pod_done(_pod(phase="Succeeded")) and pod_done(_pod(phase="Failed"))
    assert pod_done(_pod(deleted=True))
    assert not pod_done(_pod(deleted=True, node="node-1"))  # still running there
    assert not pod_done(_pod(phase="Running"))


def test_owning_pod_is_the_controller_pod_reference():
    def claim(refs):
        return ResourceClaimV1({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                "metadata": {"name": "c", "ownerReferences": refs},
                                "spec": {"devices": {}}})
    pod_ref = {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u", "controller": True}
    assert owning_pod(claim([pod_ref])) == ("p", "u")
    assert owning_pod(claim([{**pod_ref, "controller": False}])) is None
    assert owning_pod(claim([{**pod_ref, "kind": "Job", "apiVersion": "batch/v1"}])) is None


def test_a_claim_made_this_round_needs_no_sync_until_the_next():
    """``reconcile`` does not sync the claims it made in the same round; the next round
    does. That holds only if syncing a just-made claim changes nothing: checked here by
    syncing them anyway (the slow path) and by the next round syncing each one."""
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "t", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [request()]}}}}
    pods = []
    for name in ("a", "b"):
        doc = pod(name)
        doc["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "t"}]
        pods.append(doc)
    docs = [node("node-1"), class_doc(), slice_doc([device("gpu-0")]), template, *pods]
    state = ClusterState.build(load(docs), VirtualClock(DEFAULT_START))
    controller = V1ClaimController()
    synced: list[str] = []
    sync = controller._sync_claim
    controller._sync_claim = lambda s, claim: synced.append(claim.name) or sync(s, claim)
    assert controller.reconcile(state)  # made the claims: a next round follows
    made = list(state.of_kind(ResourceClaimV1))
    assert len(made) == 2 and synced == []
    touched = len(state.touched)
    assert not any(sync(state, claim) for claim in made)  # the slow path: nothing to do
    assert len(state.touched) == touched
    # what the slow path remembered depends on the pods, which this round wrote
    assert not controller.reconcile(state)
    assert sorted(synced) == sorted(c.name for c in made)


def _template(name: str = "t") -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [request()]}}}}


def test_without_a_v1_template_no_pod_is_visited_and_one_added_later_is_served():
    """The shortcut (no v1 template in the state: the pods are passed over) gives what
    visiting them gives (nothing), and leaves no memo that would hide a template added
    later: the pod then gets its claim, as a controller that always visits."""
    doc = pod("a")
    doc["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "t"}]
    docs = [node("node-1"), class_doc(), slice_doc([device("gpu-0")]), doc]
    state = ClusterState.build(load(docs), VirtualClock(DEFAULT_START))
    controller, visited = V1ClaimController(), []
    create = controller._create_for
    controller._create_for = lambda s, p, made: visited.append(p.name) or create(s, p, made)
    assert not controller.reconcile(state)
    assert visited == [] and not list(state.of_kind(ResourceClaimV1))
    assert not create(state, state.get("Pod", "default", "a"), None)  # the slow path
    fresh = V1ClaimController()
    assert not fresh.reconcile(state)
    [template] = load([_template()]).objects
    state.add(template)
    assert controller.reconcile(state)
    assert visited == ["a"]
    [claim] = state.of_kind(ResourceClaimV1)
    assert owning_pod(claim) == ("a", state.get("Pod", "default", "a").meta.uid)
