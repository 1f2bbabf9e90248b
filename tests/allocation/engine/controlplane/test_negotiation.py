"""The PodSchedulingContext negotiation between the scheduler and simulated drivers."""

from __future__ import annotations

import yaml

from allocation.engine.manifests import load_texts
from allocation.engine.scheduler import Scheduler
from allocation.engine.simulation import simulate, simulate_files
from tests.allocation.engine.controlplane.cp_factories import (
    cp_claim,
    cp_class,
    cp_template,
    driver_sim,
    events_of,
    reasons,
    vendor_params,
)
from tests.factories import (
    claim,
    claim_parameters,
    device,
    named_slice,
    node,
    pod,
    resource_class,
    run,
    to_yaml,
)

A, B = "a.example.com", "b.example.com"
RACKS = [node("n1", {"rack": "a"}), node("n2", {"rack": "b"})]


def _pod(sim, name="p"):
    return sim.state.get("Pod", "default", name)


def _claim(sim, name):
    return sim.state.get("ResourceClaim", "default", name)


def _timeline(sim) -> list[tuple[str, str, str]]:
    """(kind, name, reason) of every Event, in order."""
    return [(e["involvedObject"]["kind"], e["involvedObject"]["name"], e["reason"])
            for e in sim.state.events.items]


def _rounds(sim) -> dict:
    scheduler = next(c for c in sim.controllers if isinstance(c, Scheduler))
    return dict(scheduler.negotiation.rounds)


def test_delayed_single_claim_selects_at_once_and_binds_after_allocation():
    sim = run([*RACKS, driver_sim(A, [("pb", 1, {"rack": "b"})]), cp_class("acc", A),
               cp_template("t", "acc"), pod("p", templates={"acc": "t"})])
    p = _pod(sim)
    assert p.node_name == "n2"
    c = _claim(sim, "p-acc")
    assert c.reserved_pods() == ["p"] and c.controller_name == A
    assert sim.state.get("PodSchedulingContext", "default", "p") is None  # deleted at binding
    assert _timeline(sim) == [
        ("PodSchedulingContext", "p", "PotentialNodes"),
        ("PodSchedulingContext", "p", "SelectedNode"),  # n1, at once: one claim pending
        ("PodSchedulingContext", "p", "UnsuitableNodes"),  # n1 cannot reach pool pb
        ("PodSchedulingContext", "p", "PotentialNodes"),
        ("PodSchedulingContext", "p", "SelectedNode"),  # n2
        ("ResourceClaim", "p-acc", "Allocated"),
        ("Pod", "p", "Scheduled"),
    ]
    selected = [e["message"] for e in events_of(sim, "PodSchedulingContext", "p")
                if e["reason"] == "SelectedNode"]
    assert selected[0].startswith("Selected node n1") and selected[1].startswith(
        "Selected node n2")
    assert _rounds(sim) == {"default/p": 2}


def _two_drivers(c1_status: dict | None = None) -> list[dict]:
    return [*RACKS,
            driver_sim(A, [("a1", 1, {"rack": "a"}), ("a2", 1, {"rack": "b"})]),
            driver_sim(B, [("b", 1, {"rack": "b"})]),
            cp_class("acc-a", A), cp_class("acc-b", B),
            cp_claim("c1", "acc-a", status=c1_status), cp_claim("c2", "acc-b"),
            pod("p", claims={"first": "c1", "second": "c2"})]


def test_two_pending_claims_wait_for_every_driver_before_a_node_is_selected():
    sim = run(_two_drivers())
    assert _pod(sim).node_name == "n2"
    ctx_events = [r for k, _n, r in _timeline(sim) if k == "PodSchedulingContext"]
    # Potential nodes first, both drivers answer, only then a node is selected (and the
    # potential nodes lose the one a driver reported).
    assert ctx_events == ["PotentialNodes", "UnsuitableNodes", "UnsuitableNodes",
                          "PotentialNodes", "SelectedNode"]
    assert _rounds(sim) == {"default/p": 2}
    unsuitable = [e["message"] for e in events_of(sim, "PodSchedulingContext", "p")
                  if e["reason"] == "UnsuitableNodes"]
    assert "claim first (default/c1): 0 of 2 checked node(s) unsuitable" in unsuitable[0]
    assert "claim second (default/c2): 1 of 2 checked node(s) unsuitable: n1" in unsuitable[1]


def test_recovery_deallocates_a_claim_allocated_where_the_other_cannot_be():
    on_rack_a = {"driverName": A, "controllerName": A, "allocation": {
        "resourceHandles": [{"driverName": A}], "availableOnNodes": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["a"]}]}]}}}
    sim = run(_two_drivers(on_rack_a))
    assert _pod(sim).node_name == "n2"
    c1, c2 = _claim(sim, "c1"), _claim(sim, "c2")
    assert c1.allocation.available_on_nodes["nodeSelectorTerms"][0]["matchExpressions"][0][
        "values"] == ["b"]
    assert c1.reserved_pods() == ["p"] and c2.reserved_pods() == ["p"]
    assert not c1.deallocation_requested
    assert _timeline(sim) == [
        ("PodSchedulingContext", "p", "PotentialNodes"),  # only n1: c1 is usable there only
        ("PodSchedulingContext", "p", "SelectedNode"),  # n1: one claim pending
        ("PodSchedulingContext", "p", "UnsuitableNodes"),  # b cannot reach n1
        ("PodSchedulingContext", "p", "SelectedNode"),  # cleared: n1 no longer fits
        ("ResourceClaim", "c1", "DeallocationRequested"),  # no node fits: recovery
        ("ResourceClaim", "c1", "Deallocated"),
        ("PodSchedulingContext", "p", "UnsuitableNodes"),  # a answers for c1 now pending
        ("PodSchedulingContext", "p", "PotentialNodes"),  # n2 (n1 stays unsuitable)
        ("PodSchedulingContext", "p", "SelectedNode"),  # n2, every driver has answered
        ("ResourceClaim", "c1", "Allocated"),
        ("ResourceClaim", "c2", "Allocated"),
        ("Pod", "p", "Scheduled"),
    ]


def test_potential_nodes_are_limited_to_128_on_a_300_node_cluster():
    nodes = [node(f"n{i:03d}", {"zone": "far" if i >= 250 else "near"}) for i in range(300)]
    sim = run([*nodes, driver_sim(A, [("far", 4, {"zone": "far"})]), cp_class("acc", A),
               cp_claim("c", "acc"), pod("p", claims={"acc": "c"})])
    assert _pod(sim).node_name == "n250"
    potential = [e["message"] for e in events_of(sim, "PodSchedulingContext", "p")
                 if e["reason"] == "PotentialNodes"]
    assert potential[0].startswith("128 potential node(s)")
    assert all(int(m.split(" ")[0]) <= 128 for m in potential)
    unsuitable = [e["message"] for e in events_of(sim, "PodSchedulingContext", "p")
                  if e["reason"] == "UnsuitableNodes"]
    assert "128 of 128 checked node(s) unsuitable: n000, n001" in unsuitable[0]
    # Potential nodes n128..n255 plus the 128 earlier ones: the list keeps the 122 asked
    # about now, then the earliest others, up to the limit.
    assert "250 of 256 checked node(s) unsuitable, 128 listed: n000, n001, n002, n003, " \
        "n004, n005, n128, n129 and 120 more" in unsuitable[1]
    assert _rounds(sim)["default/p"] == 3


def test_context_of_a_pending_pod_is_kept_with_every_list_within_the_limit():
    nodes = [node(f"n{i:03d}") for i in range(300)]
    sim = run([*nodes, driver_sim(A, [("none", 0, None)]), cp_class("acc", A),
               cp_claim("c", "acc"), pod("p", claims={"acc": "c"})])
    p = _pod(sim)
    assert p.node_name is None
    assert p.condition("PodScheduled")["message"] == (
        "0/300 nodes are available: 300 node(s) were reported unsuitable by the resource "
        "driver.")
    ctx = sim.state.get("PodSchedulingContext", "default", "p").to_manifest()
    assert ctx["metadata"]["ownerReferences"][0]["name"] == "p"
    assert 0 < len(ctx["spec"]["potentialNodes"]) <= 128
    [entry] = ctx["status"]["resourceClaims"]
    assert entry["name"] == "acc" and len(entry["unsuitableNodes"]) == 128


def test_mixed_pod_goes_where_structured_and_controller_claims_both_work():
    gpu_nodes = [node("n1", {"rack": "a"}), node("n2", {"rack": "a"}),
                 node("n3", {"rack": "b"})]
    sim = run([*gpu_nodes, named_slice("n2", [device("gpu-0")]),
               named_slice("n3", [device("gpu-0")]), resource_class("gpu"),
               claim_parameters("any", "true"), claim("g", params="any"),
               driver_sim(A, [("pa", 1, {"rack": "a"})]), cp_class("acc", A),
               cp_claim("c", "acc"), pod("p", claims={"gpu": "g", "acc": "c"})])
    p = _pod(sim)
    assert p.node_name == "n2"  # n1 has no GPU, n3 is out of the pool's reach
    potential = next(e["message"] for e in events_of(sim, "PodSchedulingContext", "p")
                     if e["reason"] == "PotentialNodes")
    assert potential.endswith(": n2, n3")  # n1 fails the structured claim
    assert _claim(sim, "g").allocation.node_name == "n2"
    assert _claim(sim, "c").reserved_pods() == ["p"]


def test_bound_pod_gets_a_context_with_only_the_selected_node():
    sim = run([*RACKS, driver_sim(A, [("pb", 1, {"rack": "b"})]), cp_class("acc", A),
               cp_claim("c", "acc"), pod("p", claims={"acc": "c"}, node_name="n2")])
    assert _claim(sim, "c").reserved_pods() == ["p"]
    assert _timeline(sim) == [("PodSchedulingContext", "p", "SelectedNode"),
                              ("ResourceClaim", "c", "Allocated")]
    assert sim.state.get("PodSchedulingContext", "default", "p") is None


def test_bound_pod_whose_node_the_driver_cannot_serve_keeps_its_context():
    sim = run([*RACKS, driver_sim(A, [("pb", 1, {"rack": "b"})]), cp_class("acc", A),
               cp_claim("c", "acc"), pod("p", claims={"acc": "c"}, node_name="n1")])
    assert _claim(sim, "c").allocation is None
    ctx = sim.state.get("PodSchedulingContext", "default", "p").to_manifest()
    assert ctx["spec"] == {"selectedNode": "n1"}  # no potential nodes: the choice is final
    assert reasons(sim, "ResourceClaim", "c") == ["AllocationFailed"]


def test_claim_parameters_drive_request_count_across_pools():
    sim = run([*RACKS, driver_sim(A, [("pa", 2, {"rack": "a"}), ("pb", 3, {"rack": "b"})],
                                  request_count="object.spec.count"),
               cp_class("acc", A), vendor_params("three", 3),
               cp_template("t", "acc", "three"), pod("p", templates={"acc": "t"})])
    assert _pod(sim).node_name == "n2"


def test_simulate_output_is_deterministic_and_lists_contexts_of_pending_pods(tmp_path):
    docs = [*RACKS, driver_sim(A, [("pb", 1, {"rack": "b"})], handle_data="{{ node }}"),
            cp_class("acc", A), vendor_params("v"), cp_template("t", "acc", "v"),
            pod("p1", templates={"acc": "t"}), pod("p2", templates={"acc": "t"})]
    path = tmp_path / "cp.yaml"
    path.write_text(to_yaml(docs))
    first, second = simulate_files([str(path)]), simulate_files([str(path)])
    assert first == second
    items = yaml.safe_load(first)["items"]
    contexts = [i for i in items if i["kind"] == "PodSchedulingContext"]
    assert [c["metadata"]["name"] for c in contexts] == ["p2"]  # p1 was bound: deleted
    assert contexts[0]["status"]["resourceClaims"] == [
        {"name": "acc", "unsuitableNodes": ["n1", "n2"]}]
    claims = {i["metadata"]["name"]: i for i in items if i["kind"] == "ResourceClaim"}
    assert claims["p1-acc"]["status"]["allocation"]["resourceHandles"][0]["data"] == "n2"
    assert simulate(load_texts([("x.yaml", to_yaml(docs))])).output() == simulate(
        load_texts([("x.yaml", to_yaml(docs))])).output()
