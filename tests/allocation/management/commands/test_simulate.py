"""``manage.py simulate``: output, determinism, exit codes 0/2/1, no database."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[4]
EXAMPLE = ROOT / "examples" / "quickstart.yaml"


def simulate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", "simulate", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_readme_example_gives_the_documented_result_twice_identically():
    first, second = simulate(str(EXAMPLE)), simulate(str(EXAMPLE))
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    out = yaml.safe_load(first.stdout)
    assert out["kind"] == "List"
    pods = {i["metadata"]["name"]: i for i in out["items"] if i["kind"] == "Pod"}
    assert pods["trainer-a"]["spec"]["nodeName"] == "worker-1"
    assert pods["trainer-b"]["spec"]["nodeName"] == "worker-2"
    condition = pods["trainer-c"]["status"]["conditions"][0]
    assert condition["message"] == "0/2 nodes are available: 2 cannot allocate all claims."
    kinds = [i["kind"] for i in out["items"]]
    assert kinds.index("Event") > max(i for i, k in enumerate(kinds) if k != "Event")


def test_json_output_and_flags():
    result = simulate(str(EXAMPLE), "-o", "json", "--strategy", "best-fit", "--now",
                      "2026-03-01T12:00:00Z", "--advance", "20m")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    events = [i for i in out["items"] if i["kind"] == "Event"]
    assert events[0]["firstTimestamp"] == "2026-03-01T12:00:00Z"


def test_invalid_input_exits_2_with_every_problem_and_no_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: resource.k8s.io/v1alpha2\nkind: ResourceClass\n"
                   "metadata: {name: Bad}\ndriverName: d.example.com\n---\n"
                   "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: 7}\n")
    result = simulate(str(bad))
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert any(line.startswith(f"{bad}:1 (ResourceClass Bad): metadata.name: invalid name")
               for line in lines)
    assert any("exactly one allocation mode must be set" in line for line in lines)
    assert f"{bad}:2 (Pod default/p): spec.nodeName: must be a string, not integer" in lines


def test_expensive_cel_and_bad_templates_exit_2_with_one_line_each(tmp_path):
    bomb = "['" + "a" * 1000 + "']"
    for level in range(7):
        bomb += f".map(v{level}, {'+'.join([f'v{level}'] * 8)})"
    bad = tmp_path / "cel.yaml"
    bad.write_text(yaml.safe_dump_all([
        {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimParameters",
         "metadata": {"name": "bomb"}, "requests": [{
             "driverName": "d.example.com", "namedResourcesWithAttributes": {
                 "required": [{"selector": bomb + ".all(z, size(z) > 0)"}]}}]},
        {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
         "metadata": {"name": "frobs"}, "driverName": "d.example.com",
         "numericParameters": [{"kind": "Params", "celTemplate": "Required: {{ object.n + }}"}]},
    ]))
    result = simulate(str(bad))
    assert result.returncode == 2 and result.stdout == ""
    assert "Traceback" not in result.stderr
    selector, template, summary = result.stderr.splitlines()
    assert selector == (
        f"{bad}:1 (ResourceClaimParameters default/bomb): requests[0]."
        "namedResourcesWithAttributes.required[0].selector: CEL expression too expensive: "
        "estimated cost 1,048,575,734 exceeds the limit of 1,000,000")
    assert template.startswith(
        f"{bad}:2 (ResourceClass frobs): numericParameters[0].celTemplate: placeholder 1 "
        "{{object.n +}} is not valid CEL: line 1, column 11: the expression ends too early")
    assert summary == "2 problem(s); nothing was simulated."


def test_bad_flags_and_missing_files_exit_2(tmp_path):
    assert simulate(str(EXAMPLE), "--advance", "soon").returncode == 2
    missing = simulate(str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_internal_errors_exit_1(monkeypatch, capsys):
    import pytest
    from django.core.management import call_command

    import allocation.engine.simulation as simulation

    def boom(*args, **kwargs):
        raise RuntimeError("engine bug")

    monkeypatch.setattr(simulation, "simulate_to", boom)
    with pytest.raises(SystemExit) as info:
        call_command("simulate", str(EXAMPLE))
    assert info.value.code == 1
    assert "internal error" in capsys.readouterr().err


def test_simulate_never_touches_the_database(tmp_path):
    db = tmp_path / "absent.sqlite3"
    result = subprocess.run([sys.executable, "manage.py", "simulate", str(EXAMPLE)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120,
                            env={**__import__("os").environ, "DATABASE_URL": f"sqlite:///{db}"})
    assert result.returncode == 0, result.stderr
    assert not db.exists()


def _limited() -> None:
    import resource

    # A regression must fail the test, not exhaust the machine: 2 GiB of address space.
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
HOSTILE = {
    "deep-yaml": POD + "spec:\n  x: " + "[" * 100_000 + "]" * 100_000 + "\n",
    "deep-json": '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "x": '
                 + "[" * 100_000 + "]" * 100_000 + "}",
    "self-alias": POD + "status: &a [*a]\n",
    "alias-growth": POD + "a: &a '" + "x" * 60_000 + "'\nb: [" + ",".join(["*a"] * 100) + "]\n",
    "int-keys": POD + "spec:\n  nodeSelector: {5: x, ~: y, 2024-01-01: z}\n",
    "huge-int": POD + "spec: {x: " + "9" * 5000 + "}\n",
    "no-separator": POD + POD.replace("name: p", "name: q"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_input_exits_2_with_one_line_per_problem(tmp_path, case):
    path = tmp_path / (f"{case}.json" if case.endswith("json") else f"{case}.yaml")
    path.write_text(HOSTILE[case])
    result = subprocess.run([sys.executable, "manage.py", "simulate", str(path)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120,
                            preexec_fn=_limited)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and result.stdout == ""
    *problems, summary = result.stderr.splitlines()
    assert summary.endswith("problem(s); nothing was simulated.")
    assert problems and all(line.startswith(f"{path}:1 (Pod default/p): ") for line in problems)


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--now", "9999-12-31T23:59:59Z", "is out of range"),
    ("--now", "0001-01-01T00:00:00Z", "is out of range"),
    ("--advance", "99999999999h", "is longer than the longest duration accepted"),
])
def test_times_out_of_range_are_usage_errors(flag, value, message):
    result = simulate(str(EXAMPLE), flag, value)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ") and message in result.stderr


def _v1_cluster() -> list[dict]:
    """Template pods, a shared claim, a finished pod and a consumable-capacity device."""
    v1 = "resource.k8s.io/v1"
    request = {"name": "r", "exactly": {"deviceClassName": "gpu"}}
    docs = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
         "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}},
        {"apiVersion": v1, "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}},
        {"apiVersion": v1, "kind": "ResourceSlice", "metadata": {"name": "s1"},
         "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                  "pool": {"name": "node-1", "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}, {"name": "gpu-1"},
                              {"name": "shared", "allowMultipleAllocations": True}]}},
        {"apiVersion": v1, "kind": "ResourceClaimTemplate",
         "metadata": {"name": "t", "namespace": "default"},
         "spec": {"metadata": {"labels": {"app": "train"}},
                  "spec": {"devices": {"requests": [request]}}}},
        {"apiVersion": v1, "kind": "ResourceClaim",
         "metadata": {"name": "team", "namespace": "default"},
         "spec": {"devices": {"requests": [request]}}},
    ]
    for name in ("a", "b", "c"):
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                     "spec": {"containers": [{"name": "main", "image": "x"}],
                              "resourceClaims": [{"name": "gpu",
                                                  "resourceClaimTemplateName": "t"}]}})
    for name in ("d", "e"):
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                     "spec": {"containers": [{"name": "main", "image": "x"}],
                              "resourceClaims": [{"name": "gpu",
                                                  "resourceClaimName": "team"}]}})
    return docs


def test_v1_output_is_v1_and_byte_identical_across_two_runs(tmp_path):
    path = tmp_path / "v1.yaml"
    path.write_text(yaml.safe_dump_all(_v1_cluster()))
    first, second = simulate(str(path)), simulate(str(path))
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout and first.stderr == second.stderr == ""
    items = yaml.safe_load(first.stdout)["items"]
    claims = [i for i in items if i["kind"] == "ResourceClaim"]
    assert {c["apiVersion"] for c in claims} == {"resource.k8s.io/v1"}
    assert len(claims) == 4  # three made from the template, one shared
    assert all(i["metadata"].get("uid") for i in items
               if i["apiVersion"] == "resource.k8s.io/v1" or i["kind"] == "Pod")
    pods = {i["metadata"]["name"]: i for i in items if i["kind"] == "Pod"}
    assert [pods[p]["spec"].get("nodeName") for p in "abcde"] == ["node-1"] * 5
    assert all(len(pods[p]["status"]["resourceClaimStatuses"]) == 1 for p in "abc")


def test_the_profile_flags_warn_about_dropped_fields(tmp_path):
    path = tmp_path / "v1.yaml"
    path.write_text(yaml.safe_dump_all(_v1_cluster()))
    result = simulate(str(path), "--kubernetes-version", "1.35")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"warning: {path}:3 (ResourceSlice s1): spec.devices[2].allowMultipleAllocations: "
        "field dropped: feature gate DRAConsumableCapacity is off in Kubernetes 1.35"]
    enabled = simulate(str(path), "--kubernetes-version", "1.35",
                       "--feature-gates", "DRAConsumableCapacity=true")
    assert enabled.returncode == 0 and enabled.stderr == ""
    # another gate of kube-scheduler's flag is taken, and said to change nothing here
    other = simulate(str(path), "--feature-gates", "SchedulerQueueingHints=true")
    assert other.returncode == 0 and other.stdout == simulate(str(path)).stdout
    assert other.stderr.splitlines() == [
        "warning: --feature-gates: SchedulerQueueingHints has no effect here (kube-scheduler "
        "knows it; the planner models the DRA gates of docs/v1.md)"]


@pytest.mark.parametrize(("args", "message"), [
    (("--feature-gates", "Foo=true"),
     'error: invalid argument "Foo=true" for "--feature-gates" flag: '
     "unrecognized feature gate: Foo"),
    (("--feature-gates", "DRAConsumableCapacity=maybe"),
     'error: invalid argument "DRAConsumableCapacity=maybe" for "--feature-gates" flag: '
     "invalid value of DRAConsumableCapacity=maybe, err: strconv.ParseBool: parsing "
     '"maybe": invalid syntax'),
    (("--kubernetes-version", "1.33"),
     "error: --kubernetes-version: unsupported Kubernetes version '1.33'; "
     "use one of 1.34, 1.35, 1.36"),
])
def test_bad_profile_flags_exit_2_with_kube_schedulers_text(args, message):
    result = simulate(str(EXAMPLE), *args)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [message]
