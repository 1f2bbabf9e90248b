"""Input status is validated: allocated devices exist and are held by one claim only."""

from __future__ import annotations

import pytest

from allocation.engine.manifests import InvalidManifests, load_texts
from allocation.engine.state import ClusterState
from tests.factories import claim, device, named_slice, node, pod, resource_class, to_yaml


def _status(device_id: str, node_name: str = "n0", reserved: int = 1) -> dict:
    return {"driverName": "cards.dra.example.com", "allocation": {"resourceHandles": [{
        "driverName": "cards.dra.example.com", "structuredData": {
            "nodeName": node_name,
            "namedResourcesWithAttributes": {"resources": [{"id": device_id}]}}}]},
        "reservedFor": [{"resource": "pods", "name": f"p{i}"} for i in range(reserved)]}


def _problems(docs) -> list[str]:
    loaded = load_texts([("in.yaml", to_yaml(docs))])
    with pytest.raises(InvalidManifests) as info:
        ClusterState.build(loaded)
    return [str(p) for p in info.value.problems]


BASE = [resource_class("gpu"), node("n0"), named_slice("n0", [device("d0"), device("d1")])]


def test_duplicate_allocation_in_input_status():
    lines = _problems(BASE + [claim("a", status=_status("d0")), claim("b", status=_status("d0"))])
    assert lines == ["in.yaml:5 (ResourceClaim default/b): status.allocation.resourceHandles[0]."
                     "structuredData.namedResourcesWithAttributes[0]: device d0 is already "
                     "allocated to claim default/a; a device may not be allocated to claim "
                     "default/b as well"]


def test_unknown_device_and_node():
    lines = _problems(BASE + [claim("a", status=_status("d9")),
                              claim("b", status=_status("d0", node_name="n7"))])
    assert "no device 'd9' of driver cards.dra.example.com on node n0" in lines[0]
    assert "node 'n7' publishes no namedResourcesWithAttributes resources" in lines[1]


def test_reservations_and_pod_nodes():
    lines = _problems(BASE + [claim("a", status=_status("d0", reserved=2)),
                              pod("p", node_name="ghost")])
    assert any("(Pod default/p): spec.nodeName: node 'ghost' not found" in x for x in lines)
    assert any("not shareable may be reserved for one pod, found 2" in x for x in lines)


def test_valid_status_is_taken_as_it_stands():
    loaded = load_texts([("in.yaml", to_yaml(BASE + [claim("a", status=_status("d1"))]))])
    state = ClusterState.build(loaded)
    [inventory] = state.inventories["n0"]
    assert inventory.holder == {"d1": "default/a"}


# -- fork: copy-on-write snapshots ------------------------------------------------------------
def _cluster(pods: int = 0):
    from tests.factories import claim_parameters, claim_template

    docs = [resource_class("gpu"), claim_parameters("one", 'quantities["memory"] >= "0"'),
            claim_template("gpu", params="one"), claim("shared-c", params="one")]
    for n in range(3):
        docs += [node(f"n{n}"), named_slice(f"n{n}", [device("d0", memory=("quantity", "1Gi")),
                                                       device("d1", memory=("quantity", "1Gi"))])]
    docs += [pod(f"p{i}", templates={"gpu": "gpu"}) for i in range(pods)]
    from allocation.engine.simulation import simulate

    return simulate(load_texts([("in.yaml", to_yaml(docs))])).state


def _fingerprint(state) -> tuple:
    return (sorted((str(k), repr(o.to_manifest())) for k, o in state.objects.items()),
            sorted((k, repr(sorted(i.holder.items()))) for k, i in dict.items(
                state.inventory_index)),
            sorted((k, tuple(v)) for k, v in state.usage.items()), list(state.node_order),
            len(state.events.items))


def test_fork_shares_objects_and_inventories_instead_of_copying():
    state = _cluster(pods=2)
    fork = state.fork()
    assert all(fork.objects[k] is o for k, o in state.objects.items())
    assert all(dict.get(fork.inventory_index, k) is i
               for k, i in dict.items(state.inventory_index))


def test_a_fork_never_changes_its_parent():
    from allocation.engine.autoscaler import AutoscalerSimulation
    from allocation.engine.objects import Node, Pod

    state = _cluster(pods=2)
    before = _fingerprint(state)
    sim = AutoscalerSimulation(state)
    assert sim.evict_pod("p0").ok  # deallocates its claim in the fork
    sim.add_pod(Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
                     "spec": {"resourceClaims": [{"name": "gpu", "source": {
                         "resourceClaimTemplateName": "gpu"}}]}}))
    assert sim.place("x").ok
    assert sim.add_node(Node({"apiVersion": "v1", "kind": "Node",
                              "metadata": {"name": "n9"}})).ok
    assert sim.remove_node("n2").ok
    sim.state.clock.advance_to(sim.state.clock.now.replace(year=2030))
    assert _fingerprint(state) == before
    assert state.get("ResourceClaim", "default", "p0-gpu").allocation is not None
    assert sim.state.get("ResourceClaim", "default", "p0-gpu").allocation is None


def test_parent_changes_after_a_fork_do_not_reach_the_fork():
    from allocation.engine.simulation import Simulation

    state = _cluster(pods=0)
    fork = state.fork()
    before = _fingerprint(fork)
    from allocation.engine.objects import Pod

    state.add(Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "late"},
                   "spec": {"resourceClaims": [{"name": "gpu", "source": {
                       "resourceClaimTemplateName": "gpu"}}]}}))
    Simulation(state, controllers=[__import__("allocation.engine.claims").engine.claims
                                   .ClaimController(),
                                   __import__("allocation.engine.scheduler").engine.scheduler
                                   .Scheduler()]).settle()
    assert state.get("Pod", "default", "late").node_name == "n0"
    assert _fingerprint(fork) == before


def test_forks_of_forks_are_independent():
    state = _cluster(pods=0)
    first = state.fork()
    second = first.fork()
    inventory = first.inventory_index[("n0", "cards.dra.example.com",
                                       "namedResourcesWithAttributes")]
    inventory.take(inventory.devices[0], "default/x")
    other = second.inventory_index[("n0", "cards.dra.example.com",
                                    "namedResourcesWithAttributes")]
    assert other.holder == {} and inventory.holder == {"d0": "default/x"}
    assert dict.get(state.inventory_index, ("n0", "cards.dra.example.com",
                                            "namedResourcesWithAttributes")).holder == {}


def test_remove_node_is_refused_while_used():
    from allocation.engine.state import NodeInUse

    state = _cluster(pods=1)
    with pytest.raises(NodeInUse, match="pod\\(s\\) default/p0 and allocated claim"):
        state.remove_node("n0")
    assert "n0" in state.nodes


def test_same_device_twice_in_one_allocation():
    status = _status("d0")
    handle = status["allocation"]["resourceHandles"][0]["structuredData"]
    handle["namedResourcesWithAttributes"]["resources"].append({"id": "d0"})
    lines = _problems(BASE + [claim("a", status=status)])
    assert lines == ["in.yaml:4 (ResourceClaim default/a): status.allocation.resourceHandles[0]."
                     "structuredData.namedResourcesWithAttributes[1]: device d0 of node 'n0' "
                     "is listed twice in this allocation (also at status.allocation."
                     "resourceHandles[0].structuredData.namedResourcesWithAttributes[0])"]


def test_changed_lists_what_writable_handed_out_and_what_was_added():
    state = _cluster(pods=2)
    state.changed.clear()
    first, second = sorted((p for p in state.pods()), key=lambda p: p.name)
    state.writable(first).meta.annotations["x"] = "y"
    extra = load_texts([("more.yaml", to_yaml([claim("extra")]))]).objects[0]
    state.add(extra)
    assert state.changed == {first.key, extra.key}
    fork = state.fork()
    assert fork.changed == set()  # a fork counts its own changes
    fork.writable(second)
    assert second.key in fork.changed and second.key not in state.changed


def test_has_follows_adds_removals_and_forks():
    from allocation.engine.objects import ResourceClaim, ResourceClaimV1

    loaded = load_texts([("in.yaml", to_yaml(BASE + [claim("a")]))])
    state = ClusterState.build(loaded)
    assert state.has(ResourceClaim) and not state.has(ResourceClaimV1)
    assert state.has(ResourceClaimV1 | ResourceClaim)
    fork = state.fork()
    fork.remove(fork.get("ResourceClaim", "default", "a"))
    assert not fork.has(ResourceClaim) and state.has(ResourceClaim)
    fork.add(state.get("ResourceClaim", "default", "a"))
    assert fork.has(ResourceClaim)


def test_of_kind_and_has_see_a_class_first_added_after_they_were_asked():
    from allocation.engine.objects import ResourceClaim, ResourceClaimV1
    from tests.allocation.engine.manifests.v1_docs import claim_doc, load

    state = ClusterState.build(load_texts([("in.yaml", to_yaml(BASE))]))
    either = ResourceClaim | ResourceClaimV1
    assert not state.has(either) and list(state.of_kind(either)) == []
    [v1_claim] = load([claim_doc(name="v")]).objects
    state.add(v1_claim)
    assert state.has(either) and list(state.of_kind(either)) == [v1_claim]


def test_get_finds_every_object_by_its_key_and_nothing_else():
    """``get`` looks up a plain tuple: it finds what ``objects[ObjectKey(...)]`` holds, for
    namespaced and cluster-scoped objects, and None for a key that is not there."""
    from allocation.engine.objects import ObjectKey

    state = ClusterState.build(load_texts([("in.yaml", to_yaml(BASE + [claim("a")]))]))
    assert state.objects
    for key, obj in state.objects.items():
        assert state.get(key.kind, key.namespace, key.name) is obj
        assert state.get(*key) is state.objects[ObjectKey(*key)]
    assert state.get("ResourceClaim", "default", "b") is None
    assert state.get("ResourceClaim", "other", "a") is None
    assert state.get("Node", "default", "n0") is None  # a cluster-scoped key has no namespace


def test_in_order_sorts_keys_as_the_objects_are_ordered():
    """A replaced object keeps its place, a removed and added one goes last, a fork keeps
    its parent's order and goes on from there; keys of no object are left out."""
    import random

    from allocation.engine.manifests import build_object
    from allocation.engine.objects import ObjectKey

    rng = random.Random(5)
    state = ClusterState.build(load_texts([("c.yaml", to_yaml(
        [node("n0"), *(pod(f"p{i}") for i in range(8))]))]))
    for step in range(60):
        pods = list(state.pods())
        action = rng.choice(["add", "remove", "replace", "readd", "fork"])
        if action == "add" or not pods:
            state.add(build_object(pod(f"q{step}")))
        elif action == "remove":
            state.remove(rng.choice(pods))
        elif action == "replace":
            state.add(build_object(pod(rng.choice(pods).name)))
        elif action == "readd":
            gone = rng.choice(pods)
            state.remove(gone)
            state.add(build_object(pod(gone.name)))
        else:
            state = state.fork()
        keys = list(state.objects)
        picked = set(rng.sample(keys, min(len(keys), rng.randint(0, 6))))
        picked.add(ObjectKey("Pod", "default", "nowhere"))
        assert state.in_order(picked) == [k for k in state.objects if k in picked]


def test_an_object_without_a_uid_never_gets_one_the_input_gave_another():
    # a uid copied from an earlier output onto another object (the derived uid of claim c)
    from allocation.engine.objects import stable_uid

    taken = stable_uid("ResourceClaim", "default", "c")
    text = to_yaml([
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "c", "namespace": "default"}, "spec": {}},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "p", "namespace": "default", "uid": taken},
         "spec": {"containers": [{"name": "main", "image": "x"}]}}])
    state = ClusterState.build(load_texts([("in.yaml", text)]))
    uids = [obj.meta.uid for obj in state.objects.values()]
    assert len(uids) == len(set(uids)) and taken in uids
    assert state.objects[next(k for k in state.objects if k.kind == "ResourceClaim")
                         ].meta.uid == stable_uid("ResourceClaim", "default", "c#1")
