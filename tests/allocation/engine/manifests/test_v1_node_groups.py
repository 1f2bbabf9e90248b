"""A NodeGroup's resource.k8s.io/v1 slice specs (``manifests/v1_node_groups.py``): read as
ResourceSlices under the profile, problems naming the NodeGroup and the field."""

from __future__ import annotations

from tests.allocation.engine.autoscaler.builders import V1_DRIVER, v1_node_group
from tests.allocation.engine.manifests.v1_docs import load, problems


def _group(*specs: dict) -> dict:
    return v1_node_group(slices=list(specs))


def test_filled_in_fields_and_v1_slice_rules_are_problems_of_the_entry():
    bad = {"driver": V1_DRIVER, "nodeName": "n", "allNodes": True,
           "pool": {"name": "p", "resourceSliceCount": 3},
           "devices": [{"name": "Bad_"}, {"name": "ok", "attributes": {
               "v": {"version": "1.0"}}}]}
    seed = {"driverName": V1_DRIVER, "namedResourcesWithAttributes": []}
    assert problems([_group(bad, seed)]) == [
        "spec.resourceSlices[0].nodeName: must not be set: each new node publishes the "
        "group's slices, with nodeName set to the node's name",
        "spec.resourceSlices[0].allNodes: must not be set: each new node publishes the "
        "group's slices, with nodeName set to the node's name",
        "spec.resourceSlices[0].pool.name: must not be set: the pool of each new node is "
        "named after the node",
        "spec.resourceSlices[0].pool.resourceSliceCount: must be 1, the number of this "
        "group's slices of driver 'gpu.example.com' (the pool of each new node), not 3",
        "spec.resourceSlices[0].devices[0].name: invalid name 'Bad_': must be a DNS label: "
        "lower case letters, digits and '-', starting and ending with a letter or digit, at "
        "most 63 characters",
        # an attribute's value is checked with the schema: reported beside the bad name
        "spec.resourceSlices[0].devices[1].attributes.v.version: '1.0' is not a valid "
        "semantic version (strict semver 2.0.0, e.g. 1.2.3)"]
    assert problems([_group({"driver": V1_DRIVER, "devices": [{"name": "ok", "attributes": {
        "v": {"version": "1.0"}}}]})]) == [
        "spec.resourceSlices[0].devices[0].attributes.v.version: '1.0' is not a valid "
        "semantic version (strict semver 2.0.0, e.g. 1.2.3)"]


def test_release_dependent_rules_use_the_profile():
    both = {"driver": V1_DRIVER, "devices": [{"name": "gpu-0"}],
            "sharedCounters": [{"name": "card", "counters": {"m": {"value": "1"}}}]}
    assert problems([_group(both)]) == [
        "spec.resourceSlices[0]: at most one of devices and sharedCounters may be set "
        "(Kubernetes 1.35 and later)"]
    assert problems([_group(both)], release="1.34", gates="DRAPartitionableDevices=true") == []


def test_gated_fields_are_dropped_with_a_warning_naming_the_group_and_defaults_are_set():
    tainted = {"driver": V1_DRIVER, "devices": [{"name": "gpu-0", "taints": [
        {"key": "k", "effect": "NoSchedule"}]}]}
    loaded = load([_group(tainted)], release="1.34")
    assert [str(w) for w in loaded.warnings] == [
        "v1.yaml:1 (NodeGroup gpu-pool): spec.resourceSlices[0].devices[0].taints: field "
        "dropped: feature gate DRADeviceTaints is off in Kubernetes 1.34"]
    assert loaded.objects[0].v1_resource_slices == [
        {"driver": V1_DRIVER, "devices": [{"name": "gpu-0"}]}]
    taint = load([_group(tainted)]).objects[0].v1_resource_slices[0]["devices"][0]["taints"]
    assert taint == [{"key": "k", "effect": "NoSchedule", "timeAdded": "1970-01-01T00:00:00Z"}]


def test_a_slice_count_matching_the_groups_slices_of_the_driver_is_accepted():
    counters = {"driver": V1_DRIVER, "pool": {"resourceSliceCount": 2}, "sharedCounters": [
        {"name": "card", "counters": {"m": {"value": "2"}}}]}
    devices = {"driver": V1_DRIVER, "devices": [{"name": "gpu-0"}]}
    loaded = load([_group(counters, devices)])
    assert [s["driver"] for s in loaded.objects[0].v1_resource_slices] == [V1_DRIVER] * 2
    assert loaded.objects[0].resource_slices == []


def test_a_name_repeated_in_a_drivers_slices_would_make_each_pool_invalid():
    one = {"driver": V1_DRIVER, "devices": [{"name": "gpu-0"}]}
    other = {"driver": "other.example.com", "devices": [{"name": "gpu-0"}]}
    assert problems([_group(one, other, dict(one))]) == [
        "spec.resourceSlices[2].devices[0].name: device 'gpu-0' is also at "
        "spec.resourceSlices[0].devices[0]: the pool of each new node would be invalid"]
