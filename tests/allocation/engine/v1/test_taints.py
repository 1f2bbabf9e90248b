"""Device taints and tolerations (KEP-5055) in the v1 allocator."""

from __future__ import annotations

from tests.allocation.engine.v1.builders import (
    allocator,
    claim,
    node,
    picked,
    request,
    slice_,
)


def _tainted(name: str, effect: str = "NoSchedule") -> dict:
    return {"name": name, "taints": [{"key": "k", "value": "v", "effect": effect}]}


def test_untolerated_taint_blocks():
    a = allocator([slice_("s1", [_tainted("d0"), {"name": "d1"}])])
    assert picked(a.allocate(node(), [claim("c0")])) == [[("req", "d1")]]


def test_toleration_is_copied_into_the_result():
    tol = [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}]
    a = allocator([slice_("s1", [_tainted("d0")])])
    out = a.allocate(node(), [claim("c0", request(tolerations=tol))])
    assert out.allocations[0]["devices"]["results"][0]["tolerations"] == tol


def test_none_effect_and_gate_off_do_not_block():
    a = allocator([slice_("s1", [_tainted("d0", "None")])])
    assert a.allocate(node(), [claim("c0")]).fits
    a = allocator([slice_("s1", [_tainted("d0")])], release="1.35")
    assert a.allocate(node(), [claim("c0")]).fits


def test_admin_access_does_not_bypass_taints():
    a = allocator([slice_("s1", [_tainted("d0", "NoExecute")])])
    assert not a.allocate(node(), [claim("c0", request(adminAccess=True))]).fits


def test_134_requires_every_taint_to_be_tolerated_whatever_its_effect():
    # v0.34.9 allTaintsTolerated: no effect filter (1.35 added taintPreventsAllocation)
    dev = {"name": "d0", "taints": [{"key": "k", "value": "v", "effect": "None"}]}
    gates = "DRADeviceTaints=true"
    assert not allocator([slice_("s1", [dev])], release="1.34", gates=gates).allocate(
        node(), [claim("c0")]).fits
    assert allocator([slice_("s1", [dev])], release="1.35", gates=gates).allocate(
        node(), [claim("c0")]).fits
