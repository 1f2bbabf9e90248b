"""``scheduling/checks.py``: every filter of a pending pod on every node, nearest first, for
the pod page (seed and resource.k8s.io/v1), without changing the state."""

from __future__ import annotations

from pathlib import Path

import yaml

from allocation.engine.manifests import load_files
from allocation.engine.scheduling.checks import PLUGINS, pod_checks
from allocation.engine.simulation import simulate
from tests.allocation.engine.manifests.v1_docs import load
from tests.allocation.engine.scheduling.v1_binding_docs import held_cluster
from tests.allocation.engine.scheduling.v1_outputs import extended_cluster, extended_pod
from tests.factories import claim, node, pod, run

ROOT = Path(__file__).resolve().parents[4]


def _state(name: str):
    return simulate(load_files([str(ROOT / "examples" / name)])).state


def _failed(row) -> dict[str, list[str]]:
    return {plugin: [i["check"] for i in items] for plugin, items in row.failed.items() if items}


def test_wide_render_every_node_passes_all_but_dynamic_resources_nearest_first():
    state = _state("demo.yaml")
    before = {c.ref: c.allocation for c in state.claims()}

    checks = pod_checks(state, state.get("Pod", "default", "wide-render"))

    assert [row.node for row in checks.rows] == ["t4-2", "t4-1", "a100-1", "a100-2"]
    assert all(_failed(row) == {"DynamicResources": ["devices"]} for row in checks.rows)
    assert [row.devices[0]["free"] for row in checks.rows] == [2, 1, 0, 0]
    assert checks.rows[0].claims_reason == "cannot allocate all claims"
    assert {c.ref: c.allocation for c in state.claims()} == before  # nothing taken


def test_a_node_failing_its_labels_still_shows_its_resources_and_claims():
    state = _state("demo.yaml")

    checks = pod_checks(state, state.get("Pod", "default", "h100-job"))

    assert [_failed(row) for row in checks.rows] == [{"NodeAffinity": ["nodeSelector"]}] * 4
    assert not any(row.fits for row in checks.rows)
    assert tuple(checks.rows[0].failed) == PLUGINS


def test_a_v1_pod_is_searched_on_every_node():
    state = _state("v1-gpus.yaml")

    checks = pod_checks(state, state.get("Pod", "default", "train-2"))

    assert [row.node for row in checks.rows] == ["node-a", "node-b", "node-c"]
    assert all(row.claims_reason == "cannot allocate all claims" for row in checks.rows)
    assert all(row.devices[0]["wants"] == 1 for row in checks.rows)


def test_only_the_first_nodes_are_checked_and_a_prefilter_refusal_is_the_answer():
    docs = [node(f"n{i}", cpu="1") for i in range(5)] + [pod("p", cpu="2"),
                                                          pod("q", claims={"c": "missing"})]
    state = run(docs).state

    checks = pod_checks(state, state.get("Pod", "default", "p"), limit=3)
    assert (len(checks.rows), checks.omitted) == (3, 2)
    assert _failed(checks.rows[0]) == {"NodeResourcesFit": ["cpu"]}

    refused = pod_checks(state, state.get("Pod", "default", "q"))
    assert refused.rows == [] and "missing" in refused.error


def test_a_control_plane_claim_is_left_to_the_negotiation():
    state = _state("demo.yaml")

    checks = pod_checks(state, state.get("Pod", "default", "fpga-offload"))

    # no error for its control-plane claim; allocated for rack r1, it is usable there only
    assert checks.error is None
    assert {row.node: _failed(row) for row in checks.rows} == {
        "a100-1": {}, "t4-1": {}, "a100-2": {"DynamicResources": ["claimElsewhere"]},
        "t4-2": {"DynamicResources": ["claimElsewhere"]}}


def test_a_pending_control_plane_claim_is_not_searched_and_not_an_error():
    docs = [d for d in yaml.safe_load_all((ROOT / "examples" / "demo.yaml").read_text()) if d]
    docs += [claim("fpga-2", "fpga"), pod("far", claims={"fpga": "fpga-2"},
                                            node_selector={"gpu": "h100"})]
    state = run(docs).state

    checks = pod_checks(state, state.get("Pod", "default", "far"))

    assert checks.error is None
    assert [_failed(row) for row in checks.rows] == [{"NodeAffinity": ["nodeSelector"]}] * 4


def test_a_tainted_node_fails_taint_toleration_and_its_later_checks_too():
    tainted = node("n1", labels={"zone": "a"})
    tainted["spec"] = {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}
    state = run([tainted, pod("p", node_selector={"zone": "b"})]).state

    [row] = pod_checks(state, state.get("Pod", "default", "p")).rows

    assert _failed(row) == {"TaintToleration": ["taint"], "NodeAffinity": ["nodeSelector"]}
    assert PLUGINS.index("TaintToleration") == PLUGINS.index("NodeUnschedulable") + 1


def test_a_claim_whose_binding_failed_is_not_available_on_any_node():
    # its holder runs, so PostFilter leaves it allocated: the page says why it blocks
    failed = {"type": "AttachFailed", "status": "True", "reason": "NoLink", "message": "m",
              "lastTransitionTime": "2025-01-01T00:00:00Z"}
    docs = held_cluster("2025-01-01T00:00:00Z", [failed])
    state = simulate(load(docs)).state

    checks = pod_checks(state, state.get("Pod", "default", "p"))

    [row] = checks.rows
    assert row.claims_reason == "resourceclaim not available on the node"
    assert row.failed["DynamicResources"] == [{"check": "claimUnready", "claims": ["default/c"]}]


def test_extended_resources_served_by_dra_are_searched_on_every_node():
    # no claim names them before the pod is placed: the page tries the claim they would get
    docs = [*extended_cluster(), extended_pod("taker", count="2"), extended_pod(count="1")]
    state = simulate(load(docs)).state

    checks = pod_checks(state, state.get("Pod", "default", "p"))

    [row] = checks.rows
    assert (row.fits, row.claims_reason) == (False, "cannot allocate all claims")
    assert row.devices[0]["wants"] == 1
