"""Fields of disabled feature gates are dropped, as the API server does, and reported."""

from __future__ import annotations

from allocation.engine.v1 import make_profile
from allocation.engine.v1.gated import drop_disabled_fields


def test_135_drops_alpha_fields_of_a_slice():
    doc = {"kind": "ResourceSlice", "spec": {
        "driver": "d", "sharedCounters": [{"name": "s"}],
        "devices": [{"name": "a", "taints": [{"key": "k", "effect": "NoSchedule"}],
                     "allowMultipleAllocations": True,
                     "capacity": {"bw": {"value": "1", "requestPolicy": {"default": "1"}}}}]}}
    out, dropped = drop_disabled_fields(doc, make_profile("1.35"))
    assert dropped == [
        ("spec.sharedCounters", "DRAPartitionableDevices"),
        ("spec.devices[0].taints", "DRADeviceTaints"),
        ("spec.devices[0].allowMultipleAllocations", "DRAConsumableCapacity"),
        ("spec.devices[0].capacity[bw].requestPolicy", "DRAConsumableCapacity")]
    assert out["spec"]["devices"][0] == {"name": "a", "capacity": {"bw": {"value": "1"}}}
    assert "sharedCounters" in doc["spec"]  # the input is untouched


def test_136_keeps_everything_and_templates_use_their_path():
    claim = {"kind": "ResourceClaimTemplate", "spec": {"spec": {"devices": {
        "requests": [{"name": "r", "exactly": {"deviceClassName": "c",
                                               "tolerations": [{"operator": "Exists"}]}}],
        "constraints": [{"distinctAttribute": "d/x"}]}}}}
    assert drop_disabled_fields(claim, make_profile())[1] == []
    _out, dropped = drop_disabled_fields(claim, make_profile("1.35"))
    assert dropped == [
        ("spec.spec.devices.requests[0].exactly.tolerations", "DRADeviceTaints"),
        ("spec.spec.devices.constraints[0].distinctAttribute", "DRAConsumableCapacity")]


def test_gate_flags_decide():
    doc = {"kind": "ResourceClaim", "spec": {"devices": {"requests": [
        {"name": "r", "firstAvailable": [{"name": "s", "deviceClassName": "c"}]}]}}}
    _out, dropped = drop_disabled_fields(doc, make_profile("1.36", "DRAPrioritizedList=false"))
    assert dropped == [("spec.devices.requests[0].firstAvailable", "DRAPrioritizedList")]
    cls = {"kind": "DeviceClass", "spec": {"extendedResourceName": "example.com/gpu"}}
    assert drop_disabled_fields(cls, make_profile("1.35"))[1] == [
        ("spec.extendedResourceName", "DRAExtendedResource")]


def test_in_place_changes_the_document_itself_and_drops_the_same_fields():
    doc = {"kind": "DeviceClass", "spec": {"extendedResourceName": "example.com/gpu"}}
    copied, dropped = drop_disabled_fields(doc, make_profile("1.35"))
    assert copied is not doc and "extendedResourceName" in doc["spec"]
    same, dropped_in_place = drop_disabled_fields(doc, make_profile("1.35"), in_place=True)
    assert same is doc and doc == copied and dropped_in_place == dropped


def test_list_type_attributes_are_dropped_in_1_36_with_the_gate_off_only():
    doc = {"kind": "ResourceSlice", "spec": {"driver": "d", "devices": [
        {"name": "a", "attributes": {"numa": {"ints": [0, 1]}, "m": {"string": "x"}}}]}}
    out, dropped = drop_disabled_fields(doc, make_profile("1.36"))
    assert dropped == [("spec.devices[0].attributes[numa].ints", "DRAListTypeAttributes")]
    assert out["spec"]["devices"][0]["attributes"] == {"numa": {}, "m": {"string": "x"}}
    for profile in (make_profile("1.36", "DRAListTypeAttributes=true"),
                    make_profile("1.35")):  # 1.35: an unknown field, refused by the rules
        assert drop_disabled_fields(doc, profile)[1] == []


def test_slices_without_list_attributes_are_told_apart_before_a_device_is_visited():
    from allocation.engine.v1.gated import _any_list_attribute

    plain = [{"name": "a", "attributes": {"m": {"string": "x"}}}, {"name": "b"}]
    assert not _any_list_attribute(plain) and not _any_list_attribute(())
    assert _any_list_attribute([*plain, {"attributes": {"n": {"ints": [1]}}}])
    # a part of the wrong type: the full visit sorts it out (the schema reports it)
    assert _any_list_attribute([{"attributes": {"n": 5}}]) and _any_list_attribute([5])
