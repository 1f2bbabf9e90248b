"""The v1 allocator with the real v1 device CEL (allocation.engine.cel.device)."""

from __future__ import annotations

import pytest

from allocation.engine.v1 import AllocationError, Allocator, CelRuntimeError, make_profile
from tests.allocation.engine.v1.builders import DRIVER, claim, device_class, node, request, slice_

MEM = f'device.capacity["{DRIVER}"].memory.compareTo(quantity("%s")) >= 0'


def _dev(name: str, memory: str, **attrs) -> dict:
    return {"name": name, "capacity": {"memory": {"value": memory}},
            "attributes": {k: {"int": v} for k, v in attrs.items()}}


def _alloc(devs, release="1.36"):
    return Allocator(make_profile(release), slices=[slice_("s1", devs)],
                     classes=[device_class()])


def test_capacity_selector_picks_the_large_device():
    a = _alloc([_dev("small", "40Gi"), _dev("large", "80Gi")])
    out = a.allocate(node(), [claim("c0", request("r", "gpu", 1, MEM % "80Gi"))])
    assert out.allocations[0]["devices"]["results"][0]["device"] == "large"


def test_missing_attribute_is_a_fatal_runtime_error_naming_the_claim():
    a = _alloc([_dev("d0", "40Gi")])
    sel = f'device.attributes["{DRIVER}"].cores > 4'
    with pytest.raises(AllocationError, match=r"claim default/c0: selector #0: CEL runtime"):
        a.allocate(node(), [claim("c0", request("r", "gpu", 1, sel))])


def test_guarded_selector_is_false_not_an_error():
    a = _alloc([_dev("d0", "40Gi"), _dev("d1", "40Gi", cores=8)])
    sel = (f'"cores" in device.attributes["{DRIVER}"] && '
           f'device.attributes["{DRIVER}"].cores > 4')
    out = a.allocate(node(), [claim("c0", request("r", "gpu", 1, sel))])
    assert out.allocations[0]["devices"]["results"][0]["device"] == "d1"


def test_compile_error_is_fatal():
    a = _alloc([_dev("d0", "40Gi")])
    sel = f'device.capacity["{DRIVER}"].memory >= "8Gi"'
    with pytest.raises(AllocationError, match="CEL compile error"):
        a.allocate(node(), [claim("c0", request("r", "gpu", 1, sel))])


def test_allow_multiple_allocations_needs_its_gate():
    sel = "device.allowMultipleAllocations"
    with pytest.raises(AllocationError, match="CEL compile error"):
        _alloc([_dev("d0", "40Gi")], "1.35").allocate(
            node(), [claim("c0", request("r", "gpu", 1, sel))])
    assert not _alloc([_dev("d0", "40Gi")]).allocate(
        node(), [claim("c0", request("r", "gpu", 1, sel))]).fits


def _two_drivers() -> list[dict]:
    return [slice_("s1", [_dev("a0", "40Gi"), _dev("a1", "40Gi")]),
            slice_("s2", [_dev("b0", "40Gi")], driver="other.example.com", pool="other")]


def test_a_driver_only_selector_answers_per_device_as_evaluated_on_each():
    """Selectors reading only ``device.driver`` are answered once per driver (the
    allocator's fast path): every device gets what the compiled selector says of it."""
    sel = 'device.driver.startsWith("gpu")'
    fast = Allocator(make_profile(), slices=_two_drivers(), classes=[device_class()])
    compiled = fast.compiled(sel)
    assert compiled.reads == (("driver",),)  # the fast path's case
    devices = [d for s in fast.index.slices for d in fast.index.devices(s)]
    answers = [fast.selector_result(d, compiled, "class gpu", 0) for d in devices]
    assert answers == [bool(compiled.matches(d.driver, d.raw)) for d in devices] \
        == [True, True, False]
    assert fast.evaluated == 2  # one per driver


def test_a_driver_only_selector_error_is_raised_for_every_device():
    a = Allocator(make_profile(), slices=_two_drivers(), classes=[device_class()])
    compiled = a.compiled("int(device.driver) > 0")
    assert compiled.reads == (("driver",),)
    for s in a.index.slices:
        for d in a.index.devices(s):
            with pytest.raises(CelRuntimeError) as raised:
                a.selector_result(d, compiled, "class gpu", 0)
            assert raised.value.device == "/".join(d.key)  # each device, not a cached answer
