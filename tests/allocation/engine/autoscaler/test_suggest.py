"""``autoscaler/suggest.py``: what-if suggestions for a pending pod, each confirmed by a
simulation (a node group's new node, a claim's devices freed)."""

from __future__ import annotations

from pathlib import Path

import yaml

from allocation.engine.autoscaler.suggest import what_if
from allocation.engine.manifests import load_files, load_texts
from allocation.engine.simulation import simulate
from tests.factories import to_yaml

ROOT = Path(__file__).resolve().parents[4]


def _demo(extra: list[dict]):
    docs = [d for d in yaml.safe_load_all((ROOT / "examples" / "demo.yaml").read_text()) if d]
    return simulate(load_texts([("demo.yaml", to_yaml(docs + extra))])).state


def _h100_pool(max_size: int) -> dict:
    return {"apiVersion": "draplanner.io/v1alpha1", "kind": "NodeGroup",
            "metadata": {"name": "h100-pool"},
            "spec": {"minSize": 0, "maxSize": max_size, "template": {
                "metadata": {"labels": {"gpu": "h100"}},
                "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}}}}


def test_a_node_group_whose_new_node_fits_a_pod_held_back_by_its_max_size():
    state = _demo([_h100_pool(0)])
    pod = state.get("Pod", "default", "h100-job")
    assert pod.node_name is None  # the group may not grow

    assert what_if(state, pod, []) == [{"kind": "nodeGroup", "group": "h100-pool",
                                        "atMaxSize": True, "maxSize": 0}]


def test_no_suggestion_when_nothing_would_help():
    state = simulate(load_files([str(ROOT / "examples" / "demo.yaml")])).state
    pod = state.get("Pod", "default", "wide-render")

    # no group's node has three T4s, and freeing renderer's T4 leaves t4-1 with two
    assert what_if(state, pod, ["t4-2", "t4-1", "a100-1"]) == []


def test_freeing_the_claim_that_holds_the_device_a_pod_needs_seed_and_v1():
    state = simulate(load_files([str(ROOT / "examples" / "quickstart.yaml")])).state
    pod = state.get("Pod", "default", "trainer-c")

    assert what_if(state, pod, ["worker-2"]) == [{
        "kind": "freeClaim", "claim": "default/trainer-b-gpu", "node": "worker-2",
        "pods": ["default/trainer-b"]}]

    state = simulate(load_files([str(ROOT / "examples" / "v1-gpus.yaml")])).state
    pod = state.get("Pod", "default", "train-2")
    [found] = what_if(state, pod, ["node-a"])
    assert (found["kind"], found["node"], found["pods"]) == ("freeClaim", "node-a",
                                                             ["default/train-1"])
    assert found["claim"].startswith("default/train-1-gpu-")
    # nothing was changed for real
    assert state.get("Pod", "default", "train-1").node_name == "node-a"
