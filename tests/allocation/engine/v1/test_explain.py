"""Explanations of the v1 allocator: one structured verdict per device and request."""

from __future__ import annotations

import pytest

from allocation.engine.v1 import CelRuntimeError
from allocation.engine.v1.explain import explain_node, explain_requests
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


def test_a_cel_error_verdict_names_the_selector_and_the_missing_key():
    a = allocator([slice_("s1", [device("d0")])])
    sel = f'device.attributes["{DRIVER}"].cores > 1'
    [req] = explain_node(a, node(), [claim("c0", request("r", "gpu", 1, sel))]).requests
    [v] = req.refused
    assert (v.selector, v.expression, v.key, v.error) == (
        "request selector #0", sel, "cores", "no such key: cores")


def test_the_allocators_cel_error_names_claim_request_device_and_expression():
    a = allocator([slice_("s1", [device("d0")])])
    sel = f'device.attributes["{DRIVER}"].cores > 1'
    with pytest.raises(CelRuntimeError) as caught:
        a.allocate(node(), [claim("c0", first_available("r", request("s", "gpu", 1, sel)))])
    error = caught.value
    assert str(error) == "claim default/c0: selector #0: CEL runtime error: no such key: cores"
    assert error.detail == (f"claim default/c0, request r/s, device {DRIVER}/node-1/d0: "
                            f"request selector #0 `{sel}`: CEL runtime error: "
                            "no such key: cores")


def test_explain_requests_gives_the_class_and_selectors_without_searching():
    a = allocator([slice_("s1", [device("d0", model="a")])],
                  [device_class("gpu", f'device.driver == "{DRIVER}"')])
    sel = f'device.attributes["{DRIVER}"].model == "a"'
    [req] = explain_requests(a, node(), [claim("c0", request("r", "gpu", 1, sel))])
    assert (req.device_class, req.selectors, req.matched) == (
        "gpu", [f'device.driver == "{DRIVER}"', sel], [f"{DRIVER}/node-1/d0"])


def test_a_capacity_verdict_names_the_capacity_and_the_policy():
    nic = {"name": "nic", "allowMultipleAllocations": True, "capacity": {"bw": {
        "value": "10", "requestPolicy": {"validValues": ["1", "5"]}}}}
    a = allocator([slice_("s1", [nic])])
    c = claim("c0", request(capacity={"requests": {"bw": "6"}}))
    [req] = explain_node(a, node(), [c]).requests
    [v] = req.refused
    assert (v.reason, v.capacity, v.error) == (
        "capacity", "bw", "capacity bw: 6 violates the request policy (validValues 1, 5)")


def test_a_capacity_verdict_says_what_is_left():
    nic = {"name": "nic", "allowMultipleAllocations": True,
           "capacity": {"bw": {"value": "10Gi"}}}
    a = allocator([slice_("s1", [nic])])
    first = claim("c0", request(capacity={"requests": {"bw": "8Gi"}}))
    a.commit(first, a.allocate(node(), [first]).allocations[0])
    [req] = explain_node(a, node(), [claim("c1", request(capacity={
        "requests": {"bw": "4Gi"}}))]).requests
    assert req.refused[0].error == "capacity bw: needs 4Gi, 2Gi left of 10Gi"


def test_distinct_attribute_refusal_names_the_device_of_the_other_request():
    devs = [device("d0", model="a", idx="0"), device("d1", model="a", idx="1")]
    a = allocator([slice_("s1", devs)])
    c = claim("c0", request("r0", "gpu", 1, f'device.attributes["{DRIVER}"].idx == "0"'),
              request("r1", "gpu", 1, f'device.attributes["{DRIVER}"].idx == "1"'),
              constraints=[{"distinctAttribute": f"{DRIVER}/model"}])
    r0, r1 = explain_node(a, node(), [c]).requests
    assert (r0.matched, r1.matched) == ([], [])
    assert [(v.reason, v.constraint, v.against) for v in r0.refused + r1.refused
            if v.reason == "constraint"] == [
        ("constraint", f"distinctAttribute {DRIVER}/model", f"{DRIVER}/node-1/d1"),
        ("constraint", f"distinctAttribute {DRIVER}/model", f"{DRIVER}/node-1/d0")]


def test_a_134_taint_of_any_effect_is_explained_as_the_search_refuses_it():
    dev = {"name": "d0", "taints": [{"key": "k", "value": "v", "effect": "None"}]}
    a = allocator([slice_("s1", [dev])], release="1.34", gates="DRADeviceTaints=true")
    [req] = explain_node(a, node(), [claim("c0")]).requests
    assert [(v.device.rsplit("/", 1)[1], v.reason) for v in req.refused] == [("d0", "taint")]
