"""Explanations of the v1 allocator: one structured verdict per device and request."""

from __future__ import annotations

from allocation.engine.v1.explain import explain_node
from tests.allocation.engine.v1.builders import (
    DRIVER,
    allocator,
    claim,
    device,
    device_class,
    first_available,
    node,
    request,
    slice_,
)


def _by_device(req):
    return {v.device.rsplit("/", 1)[1]: v for v in req.refused}


def test_each_refusal_names_its_cause():
    devs = [device("taken"), device("other", model="x"),
            {"name": "tainted", "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
             "attributes": {"model": {"string": "a"}}},
            device("wrong", model="b")]
    a = allocator([slice_("s1", devs)],
                  [device_class("gpu", f'device.driver == "{DRIVER}"')])
    a.commit(claim("x"), a.allocate(node(), [claim("x")]).allocations[0])
    sel = f'device.attributes["{DRIVER}"].model == "a"'
    ex = explain_node(a, node(), [claim("c0", request("r", "gpu", 1, sel))])
    assert ex.reason == "cannot allocate all claims" and not ex.fatal
    [req] = ex.requests
    assert req.matched == []
    got = _by_device(req)
    assert got["taken"].reason == "in-use" and got["taken"].claim == "default/x"
    assert got["other"].reason == "request-selector-false" and got["other"].expression == sel
    assert got["tainted"].reason == "taint" and got["tainted"].taint["key"] == "k"
    assert got["wrong"].reason == "request-selector-false"


def test_cel_error_is_reported_per_device_and_as_fatal():
    a = allocator([slice_("s1", [device("d0")])])
    sel = f'device.attributes["{DRIVER}"].cores > 1'
    ex = explain_node(a, node(), [claim("c0", request("r", "gpu", 1, sel))])
    assert "CEL runtime error" in ex.fatal
    [verdict] = ex.requests[0].refused
    assert verdict.reason == "cel-error" and "no such key" in verdict.error


def test_counters_report_what_is_left():
    counters = slice_("counters", [], sharedCounters=[
        {"name": "gpu-0", "counters": {"memory": {"value": "8Gi"}}}], count=2, pool="node-1")
    part = {"name": "whole", "consumesCounters": [
        {"counterSet": "gpu-0", "counters": {"memory": {"value": "16Gi"}}}]}
    a = allocator([counters, slice_("devices", [part], count=2)])
    [req] = explain_node(a, node(), [claim("c0")]).requests
    [v] = req.refused
    assert (v.reason, v.counter_set, v.counter, v.available, v.needed) == (
        "counters", "gpu-0", "memory", "8Gi", "16Gi")


def test_subrequests_are_explained_separately_and_pools_flagged():
    a = allocator([slice_("a", [device("d")], count=2)])
    ex = explain_node(a, node(), [claim("c0", first_available("r", request("s1"),
                                                               request("s2")))])
    assert [r.request for r in ex.requests] == ["r/s1", "r/s2"]
    assert ex.requests[0].refused[0].reason == "pool-incomplete"


def test_constraint_refusal_names_the_other_device():
    devs = [device("d0", model="a"), device("d1", model="b")]
    a = allocator([slice_("s1", devs)])
    c = claim("c0", request("r0", "gpu", 1, f'device.attributes["{DRIVER}"].model == "a"'),
              request("r1", "gpu", 1, f'device.attributes["{DRIVER}"].model == "b"'),
              constraints=[{"matchAttribute": f"{DRIVER}/model"}])
    ex = explain_node(a, node(), [c])
    r0 = ex.requests[0]
    assert r0.matched == []
    assert any(v.reason == "constraint" and v.against.endswith("/d1") for v in r0.refused)
