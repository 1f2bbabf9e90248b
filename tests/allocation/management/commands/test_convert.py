"""``manage.py convert --to v1``: exit codes 0/2/3, determinism, formats, flags."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[4]
QUICKSTART = ROOT / "examples" / "quickstart.yaml"
DEMO = ROOT / "examples" / "demo.yaml"


def convert(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", "convert", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_quickstart_converts_byte_identically_with_its_warnings():
    first, second = convert("--to", "v1", str(QUICKSTART)), convert("--to", "v1",
                                                                   str(QUICKSTART))
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout and first.stderr == second.stderr
    out = yaml.safe_load(first.stdout)
    assert out["apiVersion"] == "v1" and out["kind"] == "List"
    assert [i["kind"] for i in out["items"]].count("ResourceSlice") == 2
    path = str(QUICKSTART)
    assert first.stderr.splitlines() == [
        f"{path}:3 (NodeResourceSlice worker-1-cards): spec.namedResourcesWithAttributes[0]"
        ".attributes[3]: quantity attribute 'memory' becomes capacity 'memory': "
        "matchAttribute cannot use it",
        f"{path}:4 (NodeResourceSlice worker-2-cards): spec.namedResourcesWithAttributes[0]"
        ".attributes[2]: quantity attribute 'memory' becomes capacity 'memory': "
        "matchAttribute cannot use it",
        f"{path}:8 (ResourceClaimTemplate default/big-gpu): spec.spec.parametersRef: not "
        "shareable has no v1 form: every v1 claim can be shared by up to 256 pods",
    ]


def test_json_output_is_the_same_list():
    as_yaml = yaml.safe_load(convert("--to", "v1", str(QUICKSTART)).stdout)
    result = convert("--to", "v1", "-o", "json", str(QUICKSTART))
    assert result.returncode == 0
    assert json.loads(result.stdout) == as_yaml


def test_impossible_objects_exit_3_with_nothing_written_unless_lossy():
    strict = convert("--to", "v1", str(DEMO))
    assert strict.returncode == 3 and strict.stdout == ""
    assert strict.stderr.splitlines()[-1] == (
        "3 object(s) could not be converted (ResourceClass fpga, DriverSimulation fpga, "
        "ResourceClaim default/fpga-accel); nothing was written. Use --lossy to write "
        "approximations.")
    lossy = convert("--to", "v1", "--lossy", str(DEMO))
    assert lossy.returncode == 0, lossy.stderr
    names = {(i["kind"], i["metadata"]["name"]) for i in yaml.safe_load(lossy.stdout)["items"]}
    assert {("DeviceClass", "fpga"), ("ResourceSlice", "fpga-rack-r1-fpgas"),
            ("ResourceClaim", "fpga-accel")} <= names
    assert "(written as an approximation: --lossy)" in lossy.stderr


def test_counters_flag_chooses_units_or_consumable_capacity():
    units = yaml.safe_load(convert("--to", "v1", "--lossy", str(DEMO)).stdout)["items"]
    consumable = yaml.safe_load(convert("--to", "v1", "--lossy", "--counters", "consumable",
                                        str(DEMO)).stdout)["items"]

    def vfs(items):
        return next(i for i in items if i["metadata"]["name"] == "a100-1-vfs")["spec"]
    assert len(vfs(units)["devices"]) == 8
    assert vfs(consumable)["devices"][0]["capacity"] == {"count": {"value": "8"}}


def test_invalid_input_exits_2_with_the_loader_problems(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: resource.k8s.io/v1alpha2\nkind: ResourceClass\n"
                   "metadata: {name: c}\ndriverNme: x\n")
    result = convert("--to", "v1", str(bad))
    assert result.returncode == 2 and result.stdout == ""
    assert f"{bad}:1 (ResourceClass c): driverNme: unknown field" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1].endswith("nothing was converted.")


def test_to_is_required_and_only_v1():
    assert convert(str(QUICKSTART)).returncode == 2
    assert convert("--to", "v1beta1", str(QUICKSTART)).returncode == 2
