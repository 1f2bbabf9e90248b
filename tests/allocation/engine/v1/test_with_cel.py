"""The v1 allocator with the real v1 device CEL (allocation.engine.cel.device)."""

from __future__ import annotations

import pytest

from allocation.engine.v1 import AllocationError, Allocator, make_profile
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
