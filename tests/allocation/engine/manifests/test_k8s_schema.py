"""Core kinds against the Kubernetes schema: typos, types, kubectl output kept as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from allocation.engine.manifests import InvalidManifests, k8s_schema, load_texts
from allocation.engine.manifests.k8s_schema import (
    CORE_MODELS,
    INT_OR_STRING_FIELDS,
    QUANTITY_FIELDS,
    model_fields,
    model_schema,
)
from allocation.engine.manifests.remembered import Remembered
from allocation.engine.manifests.schema import Obj
from allocation.engine.writer import to_yaml

ROOT = Path(__file__).resolve().parents[4]
DATA = Path(__file__).resolve().parent / "data"
KUBECTL = [DATA / "dra_objects.yaml", DATA / "kubectl_node.yaml", DATA / "kubectl_pod.yaml",
           DATA / "kubectl_running_pod.yaml"]

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  nodeSelecter: {zone: a}
  containers: [{name: c, image: app}]
"""
TEMPLATE = """\
apiVersion: v1
kind: PodTemplate
metadata: {name: t, namespace: default}
template:
  metadata: {labels: {app: t}}
  spec:
    nodeSelecter: {zone: a}
    containers: [{name: c, image: app}]
"""
TYPO = "unknown field (did you mean nodeSelector?)"


def problems(text: str, name: str = "in.yaml") -> list[str]:
    try:
        load_texts([(name, text)])
    except InvalidManifests as exc:
        return [str(p) for p in exc.problems]
    return []


def simulate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", "simulate", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_a_pod_field_typo_is_an_unknown_field_with_did_you_mean():
    assert problems(POD) == [f"in.yaml:1 (Pod default/p): spec.nodeSelecter: {TYPO}"]


def test_a_pod_template_field_typo_is_reported_in_the_template_spec():
    assert problems(TEMPLATE) == [
        f"in.yaml:1 (PodTemplate default/t): template.spec.nodeSelecter: {TYPO}"]


def test_simulate_exits_2_on_the_typos_and_simulates_nothing(tmp_path):
    bad = tmp_path / "typo.yaml"
    bad.write_text(POD + "---\n" + TEMPLATE)
    result = simulate(str(bad))
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        f"{bad}:1 (Pod default/p): spec.nodeSelecter: {TYPO}",
        f"{bad}:2 (PodTemplate default/t): template.spec.nodeSelecter: {TYPO}",
        "2 problem(s); nothing was simulated."]


def test_kubectl_output_is_accepted_and_written_back_unchanged():
    result = simulate(*map(str, KUBECTL))
    assert result.returncode == 0, result.stderr
    out = {(i["kind"], i["metadata"]["name"]): i for i in yaml.safe_load(result.stdout)["items"]}
    given = {(d["kind"], d["metadata"]["name"]): d
             for path in KUBECTL for d in yaml.safe_load_all(path.read_text())}
    # Node and the running pod: the planner changes nothing, so every field comes back.
    for key in (("Node", "gpu-node-1"), ("Pod", "cache-0")):
        assert to_yaml(out[key]) == to_yaml(given[key])
    assert out["Pod", "cache-0"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == 1
    # The pending pod is bound and gets its PodScheduled condition; nothing else changes.
    pod, before = out["Pod", "web-7d4b9c8f6d-x2x9k"], given["Pod", "web-7d4b9c8f6d-x2x9k"]
    assert pod["spec"].pop("nodeName") == "gpu-node-1"
    assert [c["type"] for c in pod["status"].pop("conditions")] == ["PodScheduled"]
    assert to_yaml(pod) == to_yaml(before)


def test_the_planner_reads_what_kubectl_prints():
    loaded = load_texts([(p.name, p.read_text()) for p in KUBECTL])
    objects = {(o.kind_name, o.meta.name): o for o in loaded.objects}
    node = objects["Node", "gpu-node-1"]
    assert (node.cpu_milli, node.memory, node.max_pods) == (95500, 1134186016 * 1024, 110)
    pod = objects["Pod", "web-7d4b9c8f6d-x2x9k"]
    assert pod.node_selector == {"kubernetes.io/os": "linux"}
    assert (pod.cpu_milli, pod.memory) == (500, 512 * 1024 ** 2)
    assert objects["Pod", "cache-0"].cpu_milli == 1000  # `cpu: 1`, a number


@pytest.mark.parametrize(("change", "path", "message"), [
    ("spec.containers[0].ports", "spec.containers[0].ports[0].containerPort",
     "must be an integer, not string '80'"),
    ("spec.containers[0].livenessProbe", "spec.containers[0].livenessProbe.periodSeconds",
     "must be an integer, not boolean"),
    ("spec.containers[0].readinessProbe", "spec.containers[0].readinessProbe.httpGet.port",
     "must be an integer or a string, not list"),
    ("spec.tolerations", "spec.tolerations", "must be a list, not object"),
    ("spec.volumes", "spec.volumes[0].emptyDir.sizeLimit", '"1Gix" is not a valid quantity'),
    ("spec.hostNetwork", "spec.hostNetwork", "must be a boolean, not string"),
    ("status.startTime", "status.startTime", "'yesterday' is not an RFC 3339 time"),
    ("spec.securityContext", "spec.securityContext.runAsUser",
     "must be an integer, not string '1000'"),
    ("spec.containers[0].env", "spec.containers[0].env[0].valu", "unknown field (did you "
     "mean value?)"),
])
def test_a_wrong_type_is_reported_at_its_field(change, path, message):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "app"}]}}
    values = {
        "spec.containers[0].ports": [{"containerPort": "80"}],
        "spec.containers[0].livenessProbe": {"exec": {"command": ["true"]},
                                             "periodSeconds": True},
        "spec.containers[0].readinessProbe": {"httpGet": {"port": [8080]}},
        "spec.tolerations": {"key": "a"},
        "spec.volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1Gix"}}],
        "spec.hostNetwork": "true",
        "status.startTime": "yesterday",
        "spec.securityContext": {"runAsUser": "1000"},
        "spec.containers[0].env": [{"name": "A", "valu": "1"}],
    }
    where, _, field = change.rpartition(".")
    target = pod
    for part in where.replace("[0]", ".0").split("."):
        target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
    target[field] = values[change]
    found = problems(yaml.safe_dump(pod))
    assert len(found) == 1, found
    assert found[0].startswith(f"in.yaml:1 (Pod default/p): {path}: {message}")


@pytest.mark.parametrize(("spec", "path", "message"), [
    # The planner's stricter rules for the fields it reads keep applying.
    ({"containers": [{"name": "c", "resources": {"requests": {"cpu": "-1"}}}]},
     "spec.containers[0].resources.requests.cpu", "must be greater than or equal to 0"),
    ({"containers": [{"name": "c"}], "nodeName": "Node_1"}, "spec.nodeName", "invalid name"),
    ({"containers": [{"name": "c"}], "nodeSelector": {"-bad": "x"}},
     "spec.nodeSelector.-bad", "invalid key '-bad'"),
    ({"containers": [{"name": "c"}], "resourceClaims": [
        {"name": "gpu", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}]},
     "spec.resourceClaims[0]", "exactly one of source, resourceClaimName, "
     "resourceClaimTemplateName may be set"),
    ({"containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}]},
     "spec.containers[0].resources.claims[0].name", "claim 'gpu' is not declared"),
    ({"containers": [{"name": "c", "resources": {"claims": [{"nam": "gpu"}]}}]},
     "spec.containers[0].resources.claims[0].name", "required field is missing"),
])
def test_the_planners_own_rules_still_apply(spec, path, message):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}
    found = problems(yaml.safe_dump(pod))
    assert any(p.startswith(f"in.yaml:1 (Pod default/p): {path}: {message}") for p in found), \
        found


def test_metadata_rules_still_apply_and_the_removed_claim_source_form_is_still_read():
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"namespace": "default", "creationTimestamp": "2025-13-01T00:00:00Z"},
           "spec": {"containers": [{"name": "c"}], "resourceClaims": [
               {"name": "gpu", "source": {"resourceClaimTemplateName": "t"}}]}}
    found = problems(yaml.safe_dump(pod))
    assert [p.split(": ")[1] for p in found] == ["metadata.name",
                                                  "metadata.creationTimestamp"]


def test_numbers_and_strings_where_kubernetes_takes_both():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "overhead": {"cpu": 0.5},
        "containers": [{"name": "c", "resources": {"requests": {"cpu": 2, "memory": "1Gi"}},
                        "livenessProbe": {"tcpSocket": {"port": 8080}},
                        "readinessProbe": {"httpGet": {"port": "http"}}}]}}
    assert problems(yaml.safe_dump(pod)) == []
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"allocatable": {"cpu": 8, "pods": 110}, "capacity": {"cpu": -8}}}
    assert problems(yaml.safe_dump(node)) == [
        "in.yaml:1 (Node n): status.capacity.cpu: must be greater than or equal to 0, not -8"]


def test_namespace_is_a_cluster_scoped_core_kind_with_checked_labels(tmp_path):
    namespace = ("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n  labels:\n"
                 "    resource.kubernetes.io/admin-access: \"true\"\n"
                 "spec: {finalizers: [kubernetes]}\nstatus: {phase: Active}\n")
    loaded = load_texts([("ns.yaml", namespace)])
    [obj] = loaded.objects
    assert str(obj.key) == "Namespace team-a"
    assert obj.raw["metadata"]["labels"] == {"resource.kubernetes.io/admin-access": "true"}
    assert problems(namespace.replace("finalizers", "finalizer")) == [
        "in.yaml:1 (Namespace team-a): spec.finalizer: unknown field (did you mean "
        "finalizers?)"]
    assert problems(namespace.replace("resource.kubernetes.io/", "-/")) == [
        "in.yaml:1 (Namespace team-a): metadata.labels.-/admin-access: invalid key "
        "'-/admin-access': the prefix '-' must be a DNS subdomain"]
    path = tmp_path / "ns.yaml"
    path.write_text(namespace)
    result = simulate(str(path))
    assert result.returncode == 0, result.stderr
    [item] = yaml.safe_load(result.stdout)["items"]
    assert item == yaml.safe_load(namespace)


def _closure() -> set[str]:
    seen: set[str] = set()
    pending = list(CORE_MODELS.values())
    while pending:
        model = pending.pop()
        if model in seen:
            continue
        seen.add(model)
        for declared in model_fields(model).values():
            name = declared.removeprefix("List[").removeprefix("Dict[str, ").rstrip("]")
            if name[:1].isupper():
                pending.append(name)
    return seen


def test_the_model_files_are_read_exactly_as_the_imported_classes_declare_them():
    from kubernetes.client import models

    closure = _closure()
    assert {"V1PodSpec", "V1Container", "V1NodeStatus", "V1NamespaceSpec"} <= closure
    for model in closure:
        cls = getattr(models, model)
        assert model_fields(model) == {cls.attribute_map[a]: t
                                       for a, t in cls.openapi_types.items()}, model


def test_without_readable_model_files_the_classes_are_imported(monkeypatch):
    monkeypatch.setattr(k8s_schema, "_module_names", dict)  # no file known
    model_fields.cache_clear()
    try:
        assert model_fields("V1PodSpec")["nodeSelector"] == "Dict[str, str]"
    finally:
        model_fields.cache_clear()


def test_every_table_entry_names_a_declared_field_of_its_model():
    for table, types in ((QUANTITY_FIELDS, {"str", "Dict[str, str]"}),
                         (INT_OR_STRING_FIELDS, {"object"})):
        for model, names in table.items():
            declared = model_fields(model)
            for name in names:
                assert declared.get(name) in types, (model, name)


def test_each_model_is_converted_once():
    spec = model_schema("V1PodSpec")
    assert model_schema("V1PodSpec") is spec
    assert isinstance(spec, Obj) and not spec.open
    containers = spec.fields["containers"].item
    assert containers is spec.fields["initContainers"].item
    # remembered.py: one node per model, so the verdicts serve every field of that model
    assert isinstance(containers, Remembered) and containers.inner is model_schema(
        "V1Container")


def test_validating_core_kinds_does_not_import_the_kubernetes_package():
    code = ("import sys; import allocation.engine.simulation\n"
            "from allocation.engine.manifests import load_texts\n"
            f"load_texts([('p.yaml', {POD.replace('Selecter', 'Selector')!r})])\n"
            "print('kubernetes' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.stdout.strip() == "False", result.stderr


@pytest.mark.parametrize("example", sorted((ROOT / "examples").glob("*.yaml")),
                         ids=lambda p: p.name)
def test_every_example_still_simulates_and_its_output_reads_back(example, tmp_path):
    result = simulate(str(example))
    assert result.returncode == 0, result.stderr
    output = tmp_path / "out.yaml"
    output.write_text(result.stdout)
    again = simulate(str(output))  # what the planner writes passes the strict schema
    assert again.returncode == 0, again.stderr
