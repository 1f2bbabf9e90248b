"""The seed's lifecycle end to end through ``manage.py simulate --advance``.

Create a request, let the autoscaler provision it, feed the output back with consuming pods
added (consume), and a second request that cannot be met expires on the virtual clock.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from tests.allocation.engine.autoscaler.builders import (
    condition,
    gpu_basics,
    gpu_devices,
    node_group,
    pod_template,
    provreq,
)
from tests.factories import named_slice, node, pod, to_yaml

ROOT = Path(__file__).resolve().parents[4]


def _simulate(path: Path, *args: str) -> dict:
    result = subprocess.run([sys.executable, "manage.py", "simulate", str(path), *args],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


def _item(out: dict, kind: str, name: str) -> dict:
    return next(i for i in out["items"] if i["kind"] == kind and i["metadata"]["name"] == name)


def test_create_provision_consume_expire(tmp_path):
    docs = gpu_basics() + [node("n1"), named_slice("n1", gpu_devices(1)), pod_template(),
                           node_group(max_size=2, devices=1),
                           provreq("train", "atomic-scale-up.kubernetes.io",
                                   [("worker", 3)], seed=True),
                           provreq("huge", pod_sets=[("worker", 9)], valid_until="600")]
    first = tmp_path / "create.yaml"
    first.write_text(to_yaml(docs))
    out = _simulate(first, "--advance", "20m")
    train = _item(out, "ProvisioningRequest", "train")
    assert condition(train, "Provisioned")["reason"] == "CapacityIsProvisioned"
    assert condition(train, "Accepted")["status"] == "True"
    nodes = sorted(i["metadata"]["name"] for i in out["items"] if i["kind"] == "Node")
    assert nodes == ["gpu-pool-1", "gpu-pool-2", "n1"]
    huge = _item(out, "ProvisioningRequest", "huge")
    assert condition(huge, "Failed")["reason"] == "Expired"
    assert condition(huge, "Provisioned")["reason"] == "CapacityIsNotFound"
    retries = [e for e in out["items"] if e["kind"] == "Event"
               and e["involvedObject"]["name"] == "huge" and e["reason"] == "CapacityIsNotFound"]
    assert [e["firstTimestamp"][11:16] for e in retries] == ["00:00", "00:01", "00:03",
                                                             "00:07"]

    # Consume: the written cluster plus pods carrying the seed's annotations.
    items = [i for i in out["items"] if i["kind"] != "Event"]
    for n in range(3):
        consumer = pod(f"train-{n}", templates={"gpu": "gpu"})
        consumer["metadata"]["annotations"] = {
            "cluster-autoscaler.kubernetes.io/provisioning-class-name":
                "atomic-scale-up.kubernetes.io",
            "cluster-autoscaler.kubernetes.io/consume-provisioning-request": "train"}
        items.append(consumer)
    second = tmp_path / "consume.yaml"
    second.write_text(to_yaml(items))
    again = _simulate(second, "--now", "2025-01-01T00:30:00Z")
    placed = {i["metadata"]["name"]: i["spec"].get("nodeName") for i in again["items"]
              if i["kind"] == "Pod"}
    assert placed == {"train-0": "gpu-pool-1", "train-1": "gpu-pool-2", "train-2": "n1"}
    nodes = sorted(i["metadata"]["name"] for i in again["items"] if i["kind"] == "Node")
    assert nodes == ["gpu-pool-1", "gpu-pool-2", "n1"]  # consumers scaled nothing
