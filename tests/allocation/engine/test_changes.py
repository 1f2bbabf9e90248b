"""engine/changes.py: a settled state brought up to date with changed objects."""

from __future__ import annotations

import copy

from allocation.engine.changes import apply_changes
from allocation.engine.manifests import build_object, load_texts
from allocation.engine.objects import NodeResourceSlice
from allocation.engine.simulation import simulate
from allocation.engine.state import ClusterState
from tests.factories import (
    claim_parameters,
    claim_template,
    device,
    named_slice,
    node,
    pod,
    resource_class,
    to_yaml,
)


def _settled():
    docs = [resource_class("gpu"), claim_parameters("one", 'quantities["memory"] >= "0"'),
            claim_template("gpu", params="one"), node("n0"),
            named_slice("n0", [device("d0", memory=("quantity", "1Gi")),
                               device("d1", memory=("quantity", "1Gi"))]),
            pod("p0", templates={"gpu": "gpu"}), pod("p1", templates={"gpu": "gpu"})]
    return simulate(load_texts([("in.yaml", to_yaml(docs))])).state


def _held(state) -> dict:
    """What each allocated claim holds, and each inventory's use, as the state has it."""
    return {"picks": {c.ref: sorted(d.id for _i, d in c.allocation.picks)
                      for c in state.claims() if c.allocation},
            "use": [i.usage() for i in state.inventories["n0"]]}


def _rebuilt(state):
    """The state a rebuild of its objects' documents makes."""
    return ClusterState.build(load_texts([("in.yaml", to_yaml(
        [o.to_manifest() for o in state.all_objects()]))]))


def test_a_claim_whose_reservations_change_keeps_its_devices_without_a_rebuild():
    state = _settled()
    held = state.get("ResourceClaim", "default", "p0-gpu")
    document = copy.deepcopy(held.to_manifest())
    document["status"].pop("reservedFor")
    inventories = state.inventories["n0"]
    assert apply_changes(state, [], [build_object(document)])
    assert state.inventories["n0"] is inventories  # not rebuilt
    claim = state.get("ResourceClaim", "default", "p0-gpu")
    assert claim is not held and claim.allocation.picks == held.allocation.picks
    assert _held(state) == _held(_rebuilt(state))


def test_a_claim_holding_other_devices_gives_back_and_takes_without_a_rebuild():
    """A claim allocated elsewhere (the worker's pass, read back by a console's baseline)
    changes only the inventories it concerns: the devices its old version held are given
    back, the ones its new version names are taken."""
    state = _settled()
    document = copy.deepcopy(state.get("ResourceClaim", "default", "p0-gpu").to_manifest())
    other = document["status"]["allocation"]["resourceHandles"][0]["structuredData"]
    before = state.inventories["n0"]
    was = other["namedResourcesWithAttributes"]["resources"][0]["id"]
    now = "d1" if was == "d0" else "d0"  # the device p1-gpu held
    other["namedResourcesWithAttributes"]["resources"] = [{"id": now}]
    gone = [state.get("Pod", "default", "p1").key, state.get("ResourceClaim", "default",
                                                               "p1-gpu").key]
    assert apply_changes(state, gone, [build_object(document)])
    assert state.inventories["n0"] is before  # not rebuilt
    claim = state.get("ResourceClaim", "default", "p0-gpu")
    assert [d.id for _inventory, d in claim.allocation.picks] == [now]
    assert _held(state) == _held(_rebuilt(state))


def test_a_claim_taking_a_device_another_holds_asks_for_a_rebuild():
    state = _settled()
    document = copy.deepcopy(state.get("ResourceClaim", "default", "p0-gpu").to_manifest())
    taken = state.get("ResourceClaim", "default", "p1-gpu").allocation.picks[0][1].id
    data = document["status"]["allocation"]["resourceHandles"][0]["structuredData"]
    data["namedResourcesWithAttributes"]["resources"] = [{"id": taken}]
    assert not apply_changes(state, [], [build_object(document)])  # a rebuild refuses it


def test_a_claim_deallocated_in_a_fork_gives_back_only_in_the_fork():
    state = _settled()
    fork = state.fork()
    document = copy.deepcopy(fork.get("ResourceClaim", "default", "p0-gpu").to_manifest())
    del document["status"]["allocation"]
    document["status"].pop("reservedFor", None)
    assert apply_changes(fork, [], [build_object(document)])
    assert _held(fork) == _held(_rebuilt(fork))
    assert _held(state) == _held(_rebuilt(state))  # the parent still holds it
    assert _held(fork) != _held(state)


def test_new_pods_alone_keep_the_epoch_and_anything_else_moves_it():
    """New pods only take capacity, so the scans' cursors (scheduling/cache.py) stay; a
    replaced pod (it may have given capacity back) or a removed object moves the epoch."""
    state = _settled()
    epoch = state.epoch
    assert apply_changes(state, [], [build_object(pod("p2", templates={"gpu": "gpu"}))])
    assert state.epoch == epoch
    old = state.get("Pod", "default", "p2")
    replaced = copy.deepcopy(old.to_manifest())
    replaced["metadata"].setdefault("labels", {})["changed"] = "yes"
    assert apply_changes(state, [], [build_object(replaced)])
    assert state.epoch > epoch
    epoch = state.epoch
    assert apply_changes(state, [state.get("Pod", "default", "p2").key], [])
    assert state.epoch > epoch


def _two_nodes():
    docs = [resource_class("gpu"), claim_parameters("one", 'quantities["memory"] >= "0"'),
            claim_template("gpu", params="one"), node("n0", cpu="2"), node("n1", cpu="2"),
            *(named_slice(n, [device("d0", memory=("quantity", "1Gi"))]) for n in ("n0", "n1")),
            pod("p0", templates={"gpu": "gpu"}), pod("p1", templates={"gpu": "gpu"})]
    return simulate(load_texts([("in.yaml", to_yaml(docs))])).state


def _on_node(state, name: str):
    """(the keys of node ``name`` and its slices; its pods unbound and their claims
    deallocated, as documents), what a scenario's ``remove-node`` changes."""
    gone = [state.nodes[name].key, *(s.key for s in state.of_kind(NodeResourceSlice)
                                     if s.node_name == name)]
    fresh = []
    for p in state.pods():
        if p.node_name == name:
            doc = copy.deepcopy(p.to_manifest())
            doc["spec"].pop("nodeName")
            doc.pop("status", None)
            fresh.append(doc)
            for c in state.claims():
                if c.allocation is not None and c.allocation.node_name == name:
                    claim_doc = copy.deepcopy(c.to_manifest())
                    claim_doc.pop("status")
                    fresh.append(claim_doc)
    return gone, fresh


def _indexes(state) -> dict:
    return {"order": state.node_order, "nodes": sorted(state.nodes),
            "inventories": {n: [i.usage() for i in state.inventories[n]]
                            for n in state.node_order},
            "picks": {c.ref: sorted((i.node_name, d.id) for i, d in c.allocation.picks)
                      for c in state.claims() if c.allocation},
            "usage": {n: state.usage_of(n) for n in state.node_order}}


def test_a_whole_node_removed_leaves_the_other_nodes_indexes_as_a_rebuild_makes_them():
    state = _two_nodes()
    placed = {p.node_name for p in state.pods()}
    assert placed == {"n0", "n1"}
    kept = state.inventories["n0"]
    held = state.get("ResourceClaim", "default", "p0-gpu")
    gone, fresh = _on_node(state, "n1")
    assert apply_changes(state, gone, [build_object(d) for d in fresh])
    assert state.inventories["n0"] is kept  # not rebuilt
    assert state.get("ResourceClaim", "default", "p0-gpu") is held  # nor copied
    assert _indexes(state) == _indexes(_rebuilt(state))
    assert state.node_order == ["n0"] and "n1" not in state.usage


def test_a_node_removed_while_a_claim_still_holds_its_devices_is_refused_as_by_a_rebuild():
    state = _two_nodes()
    gone = [state.nodes["n1"].key, *(s.key for s in state.of_kind(NodeResourceSlice)
                                     if s.node_name == "n1")]
    assert not apply_changes(state, gone, [])  # the claim allocated on n1 is left: rebuild
