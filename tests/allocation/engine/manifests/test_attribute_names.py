"""allocation.engine.manifests.attribute_names: a selector reading an attribute that no device
in the cluster has is a warning at the selector's field."""

from __future__ import annotations

from allocation.engine.manifests import load_texts
from allocation.engine.manifests.attribute_names import (
    known_attributes,
    unknown_attribute_warnings,
)
from tests import factories as f
from tests import v1_cluster as v1


def _warnings(docs: list[dict], written: list[dict]) -> list[str]:
    cluster = load_texts([("c.yaml", f.to_yaml(docs))]).objects
    objects = load_texts([("new.yaml", f.to_yaml(written))]).objects
    known = known_attributes((o.kind_name, o.raw) for o in [*cluster, *objects])
    return [str(w) for w in unknown_attribute_warnings(objects, known)]


SEED = [f.node("n1"), f.named_slice("n1", [f.device("d0", productName=("string", "T4"),
                                                    memory=("quantity", "16Gi"))])]


def test_a_seed_selector_naming_a_missing_attribute_is_warned_with_a_hint():
    params = f.class_parameters("t4", 'strings["prodName"] == "T4" && '
                                'quantities["memory"] >= "8Gi"')
    assert _warnings(SEED, [params]) == [
        "new.yaml:1 (ResourceClassParameters t4): filters[0].namedResourcesWithAttributes."
        "selector: no device in the cluster has an attribute 'prodName' "
        "(did you mean productName?)"]


def test_seed_selectors_of_known_attributes_and_partitionable_attributes_are_quiet():
    assert _warnings(SEED, [f.claim_parameters("p", 'strings["productName"] == "T4"')]) == []
    with open("examples/demo.yaml") as demo:
        loaded = load_texts([("demo.yaml", demo.read())]).objects
    known = known_attributes((o.kind_name, o.raw) for o in loaded)
    assert {"productName", "profile", "memory", "driverVersion"} <= known.seed
    assert unknown_attribute_warnings(loaded, known) == []


def test_v1_selectors_by_domain_capacity_and_the_drivers_own_domain():
    cls = v1.device_class("x", 'device.attributes["gpu.example.com"].modl == "a100" && '
                          'device.capacity["gpu.example.com"].memry.compareTo('
                          'quantity("1Gi")) >= 0 && '
                          'device.attributes[device.driver].kind == "nic" && '
                          'device.attributes[device.driver].nothing == "x" && '
                          'device.attributes["other.example.com"].model == "a100"')
    assert sorted(w.split(": ", 2)[2] for w in _warnings(v1.cluster(), [cls])) == [
        "no device in the cluster has a capacity 'gpu.example.com/memry' "
        "(did you mean gpu.example.com/memory?)",
        "no device in the cluster has an attribute 'gpu.example.com/modl' "
        "(did you mean gpu.example.com/model?)",
        "no device in the cluster has an attribute 'nothing'",
        "no device in the cluster has an attribute 'other.example.com/model' "
        "(did you mean gpu.example.com/model?)",
    ]


def test_v1_claim_and_template_selectors_are_checked_and_known_ones_are_quiet():
    claim = v1.claim("c9", selectors=[{"cel": {"expression":
                                               'device.attributes["gpu.example.com"].x'}}])
    template = v1.template("t9")
    template["spec"]["spec"]["devices"]["requests"][0] = {"name": "gpu", "firstAvailable": [
        {"name": "a", "deviceClassName": "gpu", "selectors": [
            {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "a"'}}]},
        {"name": "b", "deviceClassName": "gpu", "selectors": [
            {"cel": {"expression": 'device.attributes["gpu.example.com"].y == "a"'}}]}]}
    assert [w.split(": ")[1] for w in _warnings(v1.cluster(), [claim, template])] == [
        "spec.devices.requests[0].exactly.selectors[0].cel.expression",
        "spec.spec.devices.requests[0].firstAvailable[1].selectors[0].cel.expression"]
    assert _warnings(v1.cluster(), v1.cluster()) == []


def test_a_cluster_without_devices_warns_for_every_attribute_read():
    assert len(_warnings([], [f.class_parameters("t4", 'strings["a"] == strings["b"]')])) == 2
