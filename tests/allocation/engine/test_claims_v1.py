"""The v1 claim controller's rules (``claims_v1.py``); whole simulations are in
``test_simulation_v1.py``."""

from __future__ import annotations

import random

import pytest

from allocation.engine.claims_v1 import V1ClaimController, pod_done
from allocation.engine.constants import POD_CLAIM_NAME_ANNOTATION
from allocation.engine.events import DEFAULT_START, VirtualClock
from allocation.engine.objects import (
    ObjectKey,
    Pod,
    ResourceClaimTemplateV1,
    ResourceClaimV1,
)
from allocation.engine.state import ClusterState
from allocation.engine.touched_since import TouchedLog
from allocation.engine.v1.templates import claim_from_template
from tests.allocation.engine.manifests.v1_docs import class_doc, device, load, request, slice_doc
from tests.factories import node, pod
from tests.quiet_probe import rounds_not_asking


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
    assert claim.owner_pod == ("a", state.get("Pod", "default", "a").meta.uid)



def test_without_a_v1_claim_no_claim_kind_is_walked_and_one_added_later_is_synced():
    """The shortcut (no v1 claim in the state: a seed cluster's, whose claims share the
    kind name) asks the memo for no v1 claim; a claim added later, after rounds that
    touched other objects, is synced as by a controller that always looks."""
    docs = [node("node-1"), class_doc(), slice_doc([device("gpu-0")]), pod("a")]
    state = ClusterState.build(load(docs), VirtualClock(DEFAULT_START))
    controller = V1ClaimController()
    asked = rounds_not_asking(controller, state, ResourceClaimV1)
    claim = ResourceClaimV1({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"devices": {"requests": [request()]}},
        "status": {"reservedFor": [{"resource": "pods", "name": "gone", "uid": "u"}]}})
    state.add(claim)
    assert controller.reconcile(state)  # the reservation of a pod that is gone dropped
    assert state.get("ResourceClaim", "default", "c").reserved_for == []
    assert ResourceClaimV1 in asked

def _expected(claim: ResourceClaimV1, template: ResourceClaimTemplateV1) -> dict:
    """The slow path: the claim ``claim_from_template`` makes from ``template`` for the
    claim's pod entry, read as any claim."""
    name, uid = claim.owner_pod
    entry = claim.meta.annotations[POD_CLAIM_NAME_ANNOTATION]
    pod_doc = {"metadata": {"name": name, "namespace": claim.namespace, "uid": uid}}
    return ResourceClaimV1(claim_from_template(pod_doc, entry, template.as_v1())).to_manifest()


def _templated_pod(name: str) -> dict:
    doc = pod(name)
    doc["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "t"}]
    return doc


def _settle(controller: V1ClaimController, state: ClusterState) -> None:
    while controller.reconcile(state):
        pass


def test_the_made_index_looks_at_touched_claims_only_when_needed_or_at_a_new_pass(
        monkeypatch):
    """Within a pass, a round where no pod needs a claim made leaves the claims touched
    since the index's last look (the scheduler's writes) alone; the round a pod needs one
    looks at them, and so does the first round of a pass (another touched list), needed
    or not. Either way the claims made earlier are found, none made twice."""
    import allocation.engine.made_claims as made_claims

    docs = [node("node-1"), _template(), _templated_pod("a"), _templated_pod("b")]
    state = ClusterState.build(load(docs), VirtualClock(DEFAULT_START))
    controller = V1ClaimController()
    _settle(controller, state)
    made = list(state.of_kind(ResourceClaimV1))
    assert len(made) == 2
    entries = []
    monkeypatch.setattr(made_claims, "made_entry",
                        lambda c, real=made_claims.made_entry: entries.append(c.name) or real(c))
    for claim in made:  # as the scheduler's allocation would
        state.writable(claim).meta.labels["touched"] = "yes"
    assert not controller.reconcile(state)
    assert entries == []  # no pod needed a claim made: the touched claims wait
    for claim in made:
        state.writable(claim).meta.labels["touched"] = "again"
    state.touched = TouchedLog([], state.touched)  # a new pass
    assert not controller.reconcile(state)
    assert sorted(entries) == sorted(c.name for c in made)  # the pass's first round
    entries.clear()
    state.writable(made[0]).meta.labels["touched"] = "thrice"
    pod_a = state.get("Pod", "default", "a")
    state.writable(pod_a).resource_claim_statuses = []  # the status lost: adopted again
    state.add(load([_templated_pod("c")]).objects[0])
    _settle(controller, state)
    assert entries[0] == made[0].name  # looked at when a pod needed a claim made
    claims = list(state.of_kind(ResourceClaimV1))
    assert len(claims) == 3 and made[0] in claims and made[1] in claims
    assert state.get("Pod", "default", "a").claim_status("gpu")["resourceClaimName"] == \
        made[0].name


def test_claims_from_a_prototype_follow_an_edited_template_in_a_kept_state_and_a_fork():
    """The controller makes claims through one prototype per template (``_Made``): each is
    the claim ``claim_from_template`` makes from the template it was made from, also after
    the template is replaced by an edited one in the kept state, and in a fork that puts
    back the first one (the parent keeps the edited one)."""
    edited = _template()
    edited["spec"] = {"metadata": {"labels": {"edited": "yes"}},
                      "spec": {"devices": {"requests": [request(count=2)]}}}
    docs = [node("node-1"), class_doc(), slice_doc([device("gpu-0")]), _template(),
            _templated_pod("a"), _templated_pod("b")]
    state = ClusterState.build(load(docs), VirtualClock(DEFAULT_START))
    controller = V1ClaimController()
    _settle(controller, state)
    first = state.get("ResourceClaimTemplate", "default", "t")
    [changed] = load([edited]).objects
    state.add(changed)
    state.add(load([_templated_pod("c")]).objects[0])
    _settle(controller, state)
    fork = state.fork()
    forked = V1ClaimController()
    forked.quiet = controller.quiet.fork_for(fork)
    [again] = load([_template()]).objects
    fork.add(again)
    fork.add(load([_templated_pod("d")]).objects[0])
    _settle(forked, fork)
    state.add(load([_templated_pod("e")]).objects[0])
    _settle(controller, state)
    made_from = {state: {"a": first, "b": first, "c": changed, "e": changed},
                 fork: {"a": first, "b": first, "c": changed, "d": again}}
    for cluster, templates in made_from.items():
        claims = {c.owner_pod[0]: c for c in cluster.of_kind(ResourceClaimV1)}
        assert sorted(claims) == sorted(templates)
        for owner, claim in claims.items():
            assert claim.to_manifest() == _expected(claim, templates[owner])
            assert claim.spec is templates[owner].claim_spec
            assert claim.spec_key == repr(claim.spec)
    assert fork.get("ResourceClaim", "default", claims["d"].name).meta.labels == {}
    assert state.get("ResourceClaim", "default",
                     next(c.name for c in state.of_kind(ResourceClaimV1)
                          if c.owner_pod[0] == "e")).meta.labels == {"edited": "yes"}



def test_a_pod_is_remembered_with_the_keys_of_the_templates_and_claims_it_read():
    """A pod with nothing to do is remembered with every claim its status records and the
    template of every entry without a claim made for it (the answer for an entry whose
    claim is made does not read the template): the objects' own keys when found, a made
    key for a missing template, each an ObjectKey."""
    doc = pod("a")
    doc["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "t"},
                                     {"name": "nic", "resourceClaimTemplateName": "absent"}]
    docs = [node("node-1"), class_doc(), slice_doc([device("gpu-0")]), _template(), doc]
    state = ClusterState.build(load(docs), VirtualClock(DEFAULT_START))
    controller = V1ClaimController()
    assert controller.reconcile(state)  # made the claim of "gpu"
    [claim] = state.of_kind(ResourceClaimV1)
    remembered = []
    remember = controller.quiet.remember
    controller.quiet.remember = lambda obj, deps: remembered.append(
        (obj.name, list(deps))) or remember(obj, deps)
    assert not controller.reconcile(state)
    [deps] = [deps for name, deps in remembered if name == "a"]
    assert deps == [claim.key, ObjectKey("ResourceClaimTemplate", "default", "absent")]
    assert all(type(d) is ObjectKey for d in deps)


def test_a_claim_is_remembered_with_the_keys_of_the_pods_its_reservations_name():
    """A synced claim with nothing to do is remembered with the key of every pod its
    reservations name (the pod's own key: a reservation of a pod that is gone is dropped,
    which is a change), another consumer naming none."""
    doc = pod("a")
    doc["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "t"}]
    docs = [node("node-1"), class_doc(), slice_doc([device("gpu-0")]), _template(), doc]
    state = ClusterState.build(load(docs), VirtualClock(DEFAULT_START))
    controller = V1ClaimController()
    assert controller.reconcile(state)  # made the claim
    [claim] = state.of_kind(ResourceClaimV1)
    a = state.get("Pod", "default", "a")
    claim = state.writable(claim)
    claim.reserved_for = [{"resource": "pods", "name": "a", "uid": a.meta.uid},
                          {"apiGroup": "example.com", "resource": "things", "name": "x"}]
    remembered = []
    remember = controller.quiet.remember
    controller.quiet.remember = lambda obj, deps: remembered.append(
        (obj.name, list(deps))) or remember(obj, deps)
    assert not controller.reconcile(state)
    [deps] = [deps for name, deps in remembered if name == claim.name]
    assert deps == [a.key] and type(deps[0]) is ObjectKey
    state.remove(a)
    assert V1ClaimController()._sync_claim(state, claim)  # gone: its reservation dropped


def test_warm_brings_the_made_index_up_to_date_so_the_next_look_reads_nothing(monkeypatch):
    """``Simulation.warm`` after a settle that made and allocated claims: the made-claims
    index has read every key the settle touched, and its next look reads none again."""
    import allocation.engine.made_claims as module
    from allocation.engine.claims import ClaimController
    from allocation.engine.simulation import Simulation

    docs = [node("node-1"), class_doc(), slice_doc([device("gpu-0"), device("gpu-1")]),
            _template(), _templated_pod("a"), _templated_pod("b")]
    sim = Simulation.from_loaded(load(docs))
    sim.settle()
    index = next(c for c in sim.controllers if isinstance(c, ClaimController)).v1.made
    read = []
    monkeypatch.setattr(module, "made_entry",
                        lambda c, real=module.made_entry: read.append(c.name) or real(c))
    sim.warm()
    assert len(read) == 2  # the two claims the settle made and allocated
    read.clear()
    assert len(index.claims(sim.state)) == 2 and read == []


@pytest.mark.parametrize("seed", range(6))
def test_a_claims_sync_keeps_what_stands_and_remembers_the_pods_it_read(seed):
    """``_sync_claim`` on random reservations (the named pod running, replaced, done or
    gone; another consumer) and owners (running, done, gone, none): it keeps the
    reservations that stand, clears the allocation when the last one goes, and deletes an
    unreserved claim whose owner is done or gone (upstream's rules); with nothing to do it
    remembers the keys of the pods its pod reservations name (one that stands included:
    the shortcut that reads no more), or of its owner when it has no reservation."""
    rng = random.Random(seed)
    docs = [node("node-1"), pod("run", node_name="node-1", phase="Running"),
            pod("done", node_name="node-1", phase="Succeeded")]
    base = ClusterState.build(load(docs), VirtualClock(DEFAULT_START))
    uids = {name: base.get("Pod", "default", name).meta.uid for name in ("run", "done")}
    refs = {"run": {"resource": "pods", "name": "run", "uid": uids["run"]},
            "replaced": {"resource": "pods", "name": "run", "uid": "another"},
            "done": {"resource": "pods", "name": "done", "uid": uids["done"]},
            "gone": {"resource": "pods", "name": "gone", "uid": "g"},
            "thing": {"apiGroup": "example.com", "resource": "things", "name": "x"}}
    for case in range(40):
        state = base.fork()
        chosen = [rng.choice(list(refs)) for _ in range(rng.choice((0, 1, 1, 1, 2, 3)))]
        owner = rng.choice(["run", "done", "gone", None])
        meta: dict = {"name": f"c{case}", "namespace": "default"}
        if owner is not None:
            meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner,
                                        "uid": uids.get(owner, "g"), "controller": True}]
        claim = ResourceClaimV1({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
            "spec": {"devices": {"requests": [request()]}},
            "status": {"allocation": {"devices": {"results": []}},
                       "reservedFor": [dict(refs[c]) for c in chosen]}})
        state.add(claim)
        controller, remembered = V1ClaimController(), []
        controller.quiet.remember = lambda obj, deps, seen=remembered: seen.append(list(deps))
        kept = [c for c in chosen if c in ("run", "thing")]
        gone = not kept and owner in ("done", "gone")
        changed = len(kept) < len(chosen) or gone
        assert controller._sync_claim(state, claim) is changed, (chosen, owner)
        now = state.get("ResourceClaim", "default", claim.name)
        if gone:
            assert now is None
            continue
        assert now.reserved_for == [refs[c] for c in kept]
        assert (now.allocation is None) is (not kept and bool(chosen))
        read = [c for c in chosen if c != "thing"] or ([] if chosen else [owner] * bool(owner))
        names = {"replaced": "run"}
        expected = [ObjectKey("Pod", "default", names.get(c, c)) for c in read]
        assert remembered == ([] if changed else [expected]), (chosen, owner)


def test_a_pods_visit_answers_its_made_claim_reserved_for_it_alone():
    """A round that visits a pod whose made claim is reserved for it alone (the scheduler's
    placement) remembers that claim then, with the pod's key, as its own visit would: the
    claim is not visited after the pods. A claim reserved for two pods, for the pod's name
    with another uid or for another consumer is left to its own visit, and one that failed
    in this simulation to none."""
    names = "abcde"
    docs = [node("node-1"), _template(), *(_templated_pod(name) for name in names)]
    state = ClusterState.build(load(docs), VirtualClock(DEFAULT_START))
    controller = V1ClaimController()
    assert controller.reconcile(state)  # made the claims
    pods = {name: state.get("Pod", "default", name) for name in names}
    claims = {c.owner_pod[0]: c for c in state.of_kind(ResourceClaimV1)}

    def ref(name):
        return {"resource": "pods", "name": name, "uid": pods[name].meta.uid}
    reservations = {"a": [ref("a")], "b": [ref("b"), ref("a")], "c": [ref("c")],
                    "d": [{**ref("d"), "uid": "another"}],
                    "e": [{"apiGroup": "example.com", "resource": "things", "name": "x"}]}
    for name, reserved in reservations.items():
        state.writable(claims[name]).reserved_for = reserved
        state.writable(pods[name]).node_name = "node-1"  # as the scheduler binds it
    state.failures[claims["c"].key] = object()  # failed: no controller works on it
    synced, remembered = [], {}
    sync, remember = controller._sync_claim, controller.quiet.remember
    controller._sync_claim = lambda s, claim: synced.append(claim.name) or sync(s, claim)
    controller.quiet.remember = lambda obj, deps: remembered.__setitem__(
        obj.name, list(deps)) or remember(obj, deps)
    assert controller.reconcile(state)  # d's reservation (another uid) dropped
    assert sorted(synced) == sorted(claims[n].name for n in "bde")
    assert remembered[claims["a"].name] == [pods["a"].key]
    assert remembered[claims["b"].name] == [pods["b"].key, pods["a"].key]
    assert remembered[claims["e"].name] == []  # another consumer's: no pod read
    assert claims["c"].name not in remembered and claims["d"].name not in remembered
    assert controller.quiet.known(claims["a"]) and not controller.quiet.known(claims["c"])
    assert state.get("ResourceClaim", "default", claims["d"].name).reserved_for == []
    synced.clear()
    assert not controller.reconcile(state)
    assert synced == [claims["d"].name]  # written last round: its visit finds it settled
