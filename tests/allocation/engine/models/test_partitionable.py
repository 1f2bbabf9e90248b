"""The partitionable model: the seed's two cards (golden), inheritance, locks, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine.manifests import InvalidManifests, load_texts
from allocation.engine.models import Request, registry
from allocation.engine.models.partitionable import PartitionableInventory
from allocation.engine.models.selection import compile_selectors
from allocation.engine.simulation import simulate

DATA = Path(__file__).parent / "data"
SEED = (DATA / "seed-two-cards.yaml").read_text()
DRIVER = "cards.dra.example.com"
Q = "partitionable-gpu-1"
HQ = f"{Q}/half-and-quarters"
PSH = f"{HQ}/partitionable-second-half"


def _seed_slice() -> dict:
    docs = list(yaml.safe_load_all(SEED))
    return next(d for d in docs if d["kind"] == "NodeResourceSlice")["spec"]["partitionable"]


def _inventory(value: dict | None = None) -> PartitionableInventory:
    model = registry.get("partitionable")
    return model.build_inventory("worker-1", DRIVER, [value or _seed_slice()])


def _request(selector: str = 'quantities["memory"] >= "0"') -> Request:
    model = registry.get("partitionable")
    return Request(DRIVER, model, compile_selectors([selector]), key=("k",),
                   sources=(selector,))


def _problems(text: str) -> list[str]:
    with pytest.raises(InvalidManifests) as info:
        load_texts([("in.yaml", text)])
    return [str(p) for p in info.value.problems]


# -- golden: the seed's two cards -----------------------------------------------------------
@pytest.mark.parametrize("strategy", ["first-fit", "best-fit"])
def test_seed_two_cards_golden(strategy: str) -> None:
    expected = yaml.safe_load((DATA / "seed-two-cards.expected.yaml").read_text())[strategy]
    state = simulate(load_texts([("seed.yaml", SEED)]), strategy).state
    pods = {p.name: p.node_name for p in state.pods()}
    assert pods == expected["pods"]
    for name, ids in expected["claims"].items():
        claim = state.get("ResourceClaim", "default", name)
        if ids is None:
            assert claim.allocation is None, name
            continue
        (handle,) = claim.allocation.handles
        data = handle["structuredData"]
        assert [i["id"] for i in data["partitionable"]["instances"]] == ids
        assert data["nodeName"] == "worker-1"
        assert data["vendorClassParameters"]["kind"] == "CardClassParameters"
        assert "semantic.dra.k8s.io/delete-protection" in claim.meta.finalizers


def _explain(state, pod: str) -> str:
    return state.get("Pod", "default", pod).meta.annotations["draplanner.io/explain"]


def test_first_fit_fragmentation_is_explained_by_the_lock() -> None:
    state = simulate(load_texts([("seed.yaml", SEED)]), "first-fit").state
    detail = json.loads(_explain(state, "pod-half-2"))
    reasons = {r["reason"]: r["candidates"] for r in detail["nodes"][0]["requests"][0]["refused"]}
    assert reasons["allocated to claim default/pod-half-gpu"] == ["gpu-0"]
    blocked = (f"blocked: instance {Q} is locked to scheme quarters by claim(s) "
               "default/pod-quarters-gpu")
    assert f"{HQ}/first-half" in reasons[blocked]
    assert f"{PSH}/half/second-half" in reasons[blocked]


def test_seed_claim_refused_by_its_version_selector() -> None:
    state = simulate(load_texts([("seed.yaml", SEED)]), "best-fit").state
    detail = json.loads(_explain(state, "seed-pod"))
    refused = detail["nodes"][0]["requests"][0]["refused"]
    assert all("is false" in r["reason"] and "runtimeVersion" in r["reason"] for r in refused)
    assert detail["nodes"][0]["requests"][0]["matching"] == []


def test_selector_error_is_a_refusal_not_a_crash() -> None:
    inventory = _inventory()
    refusals: list = []
    found = list(inventory.candidates(_request('ints["nope"] > 1'), "first-fit", refusals))
    assert found == []
    assert len(refusals) == 10 and all("failed" in r.reason for r in refusals)


# -- tree, inheritance, IDs -----------------------------------------------------------------
def test_leaf_ids_in_depth_first_document_order() -> None:
    assert [c.id for c in _inventory().leaves] == [
        "gpu-0", f"{Q}/full-gpu/gpu-1", *(f"{Q}/quarters/quarter-{i}" for i in range(4)),
        f"{HQ}/first-half", f"{PSH}/half/second-half", f"{PSH}/quarters/quarter-0",
        f"{PSH}/quarters/quarter-1"]


def test_attribute_inheritance_later_wins() -> None:
    inventory = _inventory()

    def attr(leaf: str, name: str) -> str:
        return str(inventory.attributes_of(leaf).get(name).value)

    assert attr("gpu-0", "memory") == "16Gi"
    assert attr("gpu-0", "productName") == "ACME T1000 32GB"
    assert attr(f"{Q}/full-gpu/gpu-1", "memory") == "32Gi"  # the parent's, unchanged
    assert attr(f"{Q}/quarters/quarter-2", "memory") == "8Gi"  # the group's refs win
    assert attr(f"{HQ}/first-half", "memory") == "16Gi"  # its own refs win
    assert attr(f"{PSH}/quarters/quarter-1", "memory") == "8Gi"
    assert attr(f"{PSH}/quarters/quarter-1", "UUID").startswith("GPU-6aa0af9e")  # ancestors'
    assert attr(f"{PSH}/quarters/quarter-1", "runtimeVersion") == "11.1.42"


def test_own_attributes_override_references() -> None:
    value = {"commonAttributes": [{"name": "a", "attributes": [{"name": "x", "int": 1}]},
                                  {"name": "b", "attributes": [{"name": "x", "int": 2}]}],
             "resourceInstances": [{"name": "r", "commonAttributesRefs": ["b", "a"]},
                                   {"name": "s", "commonAttributesRefs": ["a"],
                                    "attributes": [{"name": "x", "int": 3}]}]}
    inventory = _inventory(value)
    assert inventory.attributes_of("r").get("x").value == 1
    assert inventory.attributes_of("s").get("x").value == 3


def test_scheme_lock_and_release() -> None:
    inventory = _inventory()
    by_id = inventory.by_id
    inventory.take(by_id[f"{Q}/quarters/quarter-0"], "ns/a")
    with pytest.raises(ValueError, match="locked to scheme quarters by claim"):
        inventory.take(by_id[f"{HQ}/first-half"], "ns/b")
    with pytest.raises(ValueError, match="allocated to claim ns/a"):
        inventory.take(by_id[f"{Q}/quarters/quarter-0"], "ns/b")
    inventory.take(by_id[f"{Q}/quarters/quarter-1"], "ns/b")
    inventory.release(by_id[f"{Q}/quarters/quarter-0"], "ns/a")
    with pytest.raises(ValueError, match="by claim\\(s\\) ns/b"):
        inventory.take(by_id[f"{Q}/full-gpu/gpu-1"], "ns/c")
    inventory.release(by_id[f"{Q}/quarters/quarter-1"], "ns/b")
    inventory.take(by_id[f"{Q}/full-gpu/gpu-1"], "ns/c")  # free again: any scheme


def test_best_fit_order_prefers_open_schemes_then_small_partitions() -> None:
    inventory = _inventory()
    ids = [c.id for c in inventory.candidates(_request(), "best-fit")]
    assert ids == [*(f"{Q}/quarters/quarter-{i}" for i in range(4)), f"{HQ}/first-half",
                   "gpu-0", f"{Q}/full-gpu/gpu-1",  # one lock (or one whole device) each
                   f"{PSH}/quarters/quarter-0", f"{PSH}/quarters/quarter-1",  # two locks
                   f"{PSH}/half/second-half"]
    inventory.take(inventory.by_id[f"{PSH}/half/second-half"], "ns/a")
    ids = [c.id for c in inventory.candidates(_request(), "best-fit")]
    assert ids == [f"{HQ}/first-half", "gpu-0"]  # no new lock first


# -- bad input -------------------------------------------------------------------------------
def test_seed_typos_are_reported() -> None:
    text = SEED.replace("  commonAttributesRefs:\n          - a4-half",
                        "  comonAttributesRefs:\n          - a4-half", 1)
    text = text.replace("version: 1.2.3", "String: 1.2.3").replace(
        "name: productName\n", "name: 'productName:'\n", 1)
    problems = "\n".join(_problems(text))
    assert ("(NodeResourceSlice worker-1-cards): spec.partitionable.resourceInstances[1]."
            "partitions[2].resourceInstances[0].comonAttributesRefs: unknown field "
            "(did you mean commonAttributesRefs?)") in problems
    assert ("spec.partitionable.commonAttributes[0].attributes[0].String: unknown field "
            "(did you mean string?)") in problems
    assert "commonAttributes[1].attributes[2].name: invalid name 'productName:'" in problems
    # Unquoted, as in the seed, `name: productName:` is not even YAML; the reader says so.
    (problem,) = _problems(SEED.replace("name: productName\n", "name: productName:\n", 1))
    assert "invalid YAML" in problem and "ending in ':' must be quoted" in problem


def test_reference_to_unknown_group() -> None:
    problems = _problems(SEED.replace(
        "            - a4-quarter\n            resourceInstances:\n            - name: quarter-0\n"
        "            - name: quarter-1",
        "            - a4-quarters\n            resourceInstances:\n            - name: quarter-0"
        "\n            - name: quarter-1"))
    (problem,) = problems
    assert ("(NodeResourceSlice worker-1-cards): spec.partitionable.resourceInstances[1]."
            "partitions[2].resourceInstances[1].partitions[1].commonAttributesRefs[0]: "
            "unknown attribute group 'a4-quarters'") in problem
    assert "(did you mean a4-quarter?)" in problem


def test_duplicate_sibling_names() -> None:
    problems = _problems(SEED.replace("- name: quarter-3", "- name: quarter-2"))
    assert any("partitions[1].resourceInstances[3].name: duplicate name 'quarter-2' (also at "
               in p for p in problems)
    problems = _problems(SEED.replace("- name: half-and-quarters", "- name: quarters"))
    assert any("partitions[2].name: duplicate name 'quarters'" in p for p in problems)


def _allocated_claim(*ids: str, name: str = "held") -> str:
    items = "".join(f"\n          - id: {i}" for i in ids)
    return f"""
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaim
metadata: {{name: {name}}}
spec: {{resourceClassName: cards}}
status:
  allocation:
    resourceHandles:
    - driverName: {DRIVER}
      structuredData:
        nodeName: worker-1
        partitionable:
          instances:{items}
"""


def test_input_allocation_of_a_non_leaf_is_refused() -> None:
    with pytest.raises(InvalidManifests) as info:
        simulate(load_texts([("in.yaml", SEED + _allocated_claim(PSH))]))
    (problem,) = info.value.problems
    assert problem.kind == "ResourceClaim" and problem.name == "held"
    assert problem.path == ("status.allocation.resourceHandles[0].structuredData."
                            "partitionable[0]")
    assert "has partitions; only leaves can be allocated" in problem.message


def test_input_allocations_breaking_the_lock_are_refused() -> None:
    text = SEED + _allocated_claim(f"{Q}/quarters/quarter-0") + _allocated_claim(
        f"{HQ}/first-half", name="other")
    with pytest.raises(InvalidManifests, match="locked to scheme quarters by claim"):
        simulate(load_texts([("in.yaml", text)]))


def test_input_allocation_is_taken_as_it_stands() -> None:
    text = SEED + _allocated_claim(f"{Q}/quarters/quarter-0", f"{Q}/quarters/quarter-1")
    state = simulate(load_texts([("in.yaml", text)]), "first-fit").state
    claim = state.get("ResourceClaim", "default", "pod-quarters-gpu")
    ids = [i["id"] for i in claim.allocation.handles[0]["structuredData"]["partitionable"][
        "instances"]]
    assert ids == [f"{Q}/quarters/quarter-2", f"{Q}/quarters/quarter-3"]


# -- properties ------------------------------------------------------------------------------
def _tree(depth: int) -> st.SearchStrategy:
    leaf = st.just({})
    if depth == 0:
        return leaf
    groups = st.lists(st.lists(_tree(depth - 1), min_size=1, max_size=3), min_size=1,
                      max_size=3)
    return st.one_of(leaf, groups.map(lambda gs: {"partitions": gs}))


def _named(node: dict, name: str) -> dict:
    out = {"name": name}
    if node.get("partitions"):
        out["partitions"] = [{"name": f"g{g}", "resourceInstances": [
            _named(child, f"i{c}") for c, child in enumerate(group)]}
            for g, group in enumerate(node["partitions"])]
    return out


@settings(max_examples=60, deadline=None)
@given(roots=st.lists(_tree(3), min_size=1, max_size=3),
       ops=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 50), st.booleans()),
                    max_size=40),
       strategy=st.sampled_from(["first-fit", "best-fit"]))
def test_locks_hold_under_any_take_release_sequence(roots, ops, strategy) -> None:
    value = {"resourceInstances": [_named(r, f"r{i}") for i, r in enumerate(roots)]}
    inventory = _inventory(value)
    initial = [c.id for c in inventory.candidates(_request(), strategy)]
    held: dict[str, str] = {}
    for owner_index, pick, take in ops:
        owner = f"ns/c{owner_index}"
        if take:
            free = list(inventory.candidates(_request(), strategy))
            if free:
                leaf = free[pick % len(free)]
                inventory.take(leaf, owner)
                held[leaf.id] = owner
        elif held:
            leaf_id = sorted(held)[pick % len(held)]
            inventory.release(inventory.by_id[leaf_id], held.pop(leaf_id))
        assert inventory.holder == held  # a leaf is held by exactly one claim
        for leaf_id, owner in held.items():
            with pytest.raises(ValueError):
                inventory.take(inventory.by_id[leaf_id], f"{owner}-other")
        active: dict[str, set[str]] = {}
        for leaf_id in held:
            for instance, group in inventory.by_id[leaf_id].data[1].locks:
                active.setdefault(instance, set()).add(group)
        assert all(len(groups) == 1 for groups in active.values())
    for leaf_id, owner in list(held.items()):
        inventory.release(inventory.by_id[leaf_id], owner)
    assert inventory.holder == {} and inventory.active == {} and inventory.in_use == {}
    assert [c.id for c in inventory.candidates(_request(), strategy)] == initial
