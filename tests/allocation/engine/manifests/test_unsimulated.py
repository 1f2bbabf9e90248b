"""Filters and kinds the planner does not simulate, warned of at loading
(``allocation/engine/manifests/unsimulated.py``)."""

from __future__ import annotations

import pytest

from allocation.engine.manifests import load_texts
from allocation.engine.manifests.unsimulated import unsimulated_fields
from tests.factories import node, pod, to_yaml

_TERM = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def test_required_pod_affinity_and_do_not_schedule_spread_are_named():
    doc = pod("p")
    doc["spec"]["affinity"] = {"podAffinity": {_REQUIRED: [_TERM]},
                               "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuring"
                                                   "Execution": [{"weight": 1,
                                                                  "podAffinityTerm": _TERM}]}}
    doc["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"},
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]
    assert [path for path, _ in unsimulated_fields(doc)] == [
        f"spec.affinity.podAffinity.{_REQUIRED}", "spec.topologySpreadConstraints[1]"]
    template = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"},
                "template": {"spec": {**doc["spec"], "affinity": {
                    "podAntiAffinity": {_REQUIRED: [_TERM]}}}}}
    assert [path for path, _ in unsimulated_fields(template)][0] == (
        f"template.spec.affinity.podAntiAffinity.{_REQUIRED}")
    assert unsimulated_fields(pod("plain")) == []


def test_loading_warns_and_still_loads_the_pod():
    doc = pod("p")
    doc["spec"]["affinity"] = {"podAntiAffinity": {_REQUIRED: [_TERM]}}
    loaded = load_texts([("in.yaml", to_yaml([node("n1"), doc]))])
    assert [o.name for o in loaded.objects] == ["n1", "p"]
    [warning] = loaded.warnings
    assert (warning.kind, warning.name, warning.path) == (
        "Pod", "p", f"spec.affinity.podAntiAffinity.{_REQUIRED}")
    assert warning.message.startswith("not simulated: InterPodAffinity's required pod "
                                      "anti-affinity")


def test_the_replicas_of_a_workload_are_warned_of_together():
    pods = []
    for index in range(10):
        doc = pod(f"web-{index}")
        doc["spec"]["affinity"] = {"podAntiAffinity": {_REQUIRED: [_TERM]}}
        if index == 9:  # a field of its own: a group of its own, said in full
            doc["spec"]["topologySpreadConstraints"] = [
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]
        pods.append(doc)
    loaded = load_texts([("in.yaml", to_yaml([node("n1"), *pods]))])
    assert len(loaded.objects) == 11  # every pod loads
    warnings = loaded.warnings
    assert [(w.name, w.path.split(".")[1]) for w in warnings] == [
        ("web-0", "affinity"), ("web-1", "affinity"), ("web-2", "affinity"),
        ("web-3", "affinity"), ("web-9", "topologySpreadConstraints[0]")]
    assert warnings[0].message == warnings[2].message
    assert warnings[3].message == (
        f"{warnings[0].message} (7 more Pod objects set this field: default/web-3, "
        "default/web-4, default/web-5, default/web-6, default/web-7, and 2 others)")
    assert str(warnings[3]).startswith("in.yaml:5 (Pod default/web-3): spec.affinity.")


_RULE = {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule",
         "metadata": {"name": "unhealthy"},
         "spec": {"deviceSelector": {"driver": "gpu.example.com"},
                  "taint": {"key": "gpu.example.com/unhealthy", "effect": "NoExecute"}}}


def test_a_device_taint_rule_is_kept_unchanged_and_warned_of_by_its_gate():
    from allocation.engine.v1 import make_profile

    text = to_yaml([node("n1"), _RULE])
    loaded = load_texts([("in.yaml", text)])
    [rule] = [o for o in loaded.objects if o.kind_name == "DeviceTaintRule"]
    assert rule.to_manifest() == _RULE
    assert [str(w) for w in loaded.warnings] == [
        "in.yaml:2 (DeviceTaintRule unhealthy): kind: has no effect: feature gate "
        "DRADeviceTaintRules is off in Kubernetes 1.36; kept and written back unchanged"]
    on = load_texts([("in.yaml", text)], make_profile("1.36", "DRADeviceTaintRules=true"))
    assert [w.message for w in on.warnings] == [
        "not simulated: DeviceTaintRule (DRADeviceTaintRules); its taint is not applied to "
        "the devices it selects, so the planner may allocate them where Kubernetes would "
        "not; kept and written back unchanged"]
    # 1.34 served the kind under DRADeviceTaints, before DRADeviceTaintRules existed
    old = load_texts([("in.yaml", text)], make_profile("1.34", "DRADeviceTaints=true"))
    assert [w.message for w in old.warnings][0].startswith(
        "not simulated: DeviceTaintRule (DRADeviceTaints)")


def test_another_unknown_kind_of_the_resource_group_is_still_refused():
    from allocation.engine.manifests import InvalidManifests

    with pytest.raises(InvalidManifests) as error:
        load_texts([("in.yaml", to_yaml([{**_RULE, "kind": "DeviceTaintRules"}]))])
    assert [p.message for p in error.value.problems] == [
        "unknown kind 'DeviceTaintRules' in resource.k8s.io/v1beta2 (did you mean "
        "DeviceTaintRule?)"]


def test_every_kind_kept_without_simulation_has_its_warning():
    from allocation.engine import kinds
    from allocation.engine.manifests.unsimulated import unsimulated_kind
    from allocation.engine.v1 import make_profile

    for names in kinds.UNSIMULATED_KINDS.values():
        for kind in names:
            for release in ("1.34", "1.35", "1.36"):
                assert unsimulated_kind(kind, make_profile(release)).endswith(
                    "kept and written back unchanged")
