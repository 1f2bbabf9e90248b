"""A ResourceSlice's devices parsed for the v1 allocator (``v1/devices.py``): capacities
with a value only are shared between devices, and answer as one parsed for the device."""

from __future__ import annotations

from fractions import Fraction

from allocation.engine.v1.devices import Device, quantity_value
from tests.allocation.engine.v1.builders import slice_


def _devices(*capacities: dict) -> list[Device]:
    raws = [{"name": f"dev-{i}", "capacity": c} for i, c in enumerate(capacities)]
    slice_doc = slice_("s1", raws)
    return [Device(raw, slice_doc) for raw in raws]


def _answers(capacity) -> tuple:
    return (
        capacity.value,
        capacity.default,
        capacity.valid_values,
        capacity.min,
        capacity.max,
        capacity.step,
        capacity.has_policy,
        capacity.has_range,
        capacity.formats,
    )


def test_plain_capacities_are_shared_and_answer_as_their_own():
    policy = {
        "value": "40Gi",
        "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}},
    }
    a, b, c, d = _devices(
        {"memory": {"value": "40Gi"}},
        {"memory": {"value": "40Gi"}},
        {"memory": {"value": 40}},
        {"memory": policy},
    )
    shared = a.capacity["memory"]
    assert b.capacity["memory"] is shared  # one parse for every device of that value
    assert c.capacity["memory"] is not shared  # 40 (a number) is another value's text
    assert d.capacity["memory"] is not shared and d.capacity["memory"].has_policy
    for device in (a, b, c, d):
        raw = device.raw["capacity"]["memory"]
        assert _answers(device.capacity["memory"]) == _answers(type(shared)(raw))
    assert shared.value == quantity_value("40Gi") == Fraction(40 * 2**30)
    assert (a.no_policy, d.no_policy) == (True, False)


def test_where_an_allocation_of_a_device_may_be_used():
    # results.node_selector reads these per pick: the slice's node fields, or with
    # perDeviceNodeSelection the device's own; bindsToNode makes any device node-local
    from allocation.engine.v1.devices import Device

    sel = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["a"]}]}]}

    def made(raw, **spec):
        return Device(raw, {"spec": {"driver": "d", "pool": {"name": "p"}, **spec}})

    local = made({"name": "a"}, nodeName="n1")
    assert (local.node_local, local.node_selector) == (True, None)
    network = made({"name": "a"}, nodeSelector=sel)
    assert (network.node_local, network.node_selector) == (False, sel)
    assert made({"name": "a", "bindsToNode": True}, allNodes=True).node_local
    assert not made({"name": "a"}, allNodes=True).node_local
    own = made({"name": "a", "nodeSelector": sel}, perDeviceNodeSelection=True,
               nodeSelector={"ignored": 1})
    assert (own.node_local, own.node_selector) == (False, sel)
    assert made({"name": "a", "nodeName": "n1"}, perDeviceNodeSelection=True).node_local
