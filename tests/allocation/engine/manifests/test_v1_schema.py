"""The v1 schemas (``manifests/v1_schema.py``): every list limit of spec section 1 at its
bound (valid) and one past it (a problem naming the field)."""

from __future__ import annotations

import pytest

from tests.allocation.engine.manifests.v1_docs import (
    claim_doc,
    class_doc,
    device,
    problems,
    request,
    slice_doc,
)

_SELECTOR = {"cel": {"expression": "true"}}
_OPAQUE = {"opaque": {"driver": "gpu.example.com", "parameters": {}}}
_RESULT = {"request": "r", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}


def _results(n: int) -> dict:
    return {"allocation": {"devices": {"results": [_RESULT] * n}}}


def _alloc_config(n: int) -> dict:
    return {"allocation": {"devices": {"config": [{"source": "FromClass", **_OPAQUE}] * n}}}


_DEVICE = {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}
_ALLOCATED = {"allocation": {"devices": {"results": [{"request": "r", **_DEVICE}]}}}


def _reserved(n: int) -> dict:
    return {**_ALLOCATED, "reservedFor": [{"resource": "pods", "name": f"p{i}",
                                           "uid": f"u{i}"} for i in range(n)]}


def _conditions(n: int) -> dict:
    return {**_ALLOCATED, "devices": [{**_DEVICE, "conditions": [
        {"type": f"t{i}", "status": "True"} for i in range(n)]}]}


def _policy(n: int) -> dict:
    return device(allowMultipleAllocations=True, capacity={"memory": {
        "value": "100", "requestPolicy": {"default": "1",
                                          "validValues": [str(i + 1) for i in range(n)]}}})


LIMITS = [
    ("class selectors", 32, lambda n: [class_doc(selectors=[_SELECTOR] * n)],
     "spec.selectors"),
    ("class config", 32, lambda n: [class_doc(config=[_OPAQUE] * n)], "spec.config"),
    ("devices", 128, lambda n: [slice_doc([device(f"d{i}") for i in range(n)])],
     "spec.devices"),
    ("counter sets", 8, lambda n: [slice_doc(sharedCounters=[
        {"name": f"s{i}", "counters": {"c": {"value": "1"}}} for i in range(n)],
        nodeName=None, allNodes=True)], "spec.sharedCounters"),
    ("consumesCounters", 2, lambda n: [slice_doc([device(consumesCounters=[
        {"counterSet": f"s{i}", "counters": {"c": {"value": "1"}}} for i in range(n)])])],
     "spec.devices[0].consumesCounters"),
    ("bindingConditions", 4, lambda n: [slice_doc([device(
        bindingConditions=[f"c{i}" for i in range(n)],
        bindingFailureConditions=["f"])])], "spec.devices[0].bindingConditions"),
    ("bindingFailureConditions", 4, lambda n: [slice_doc([device(
        bindingFailureConditions=[f"c{i}" for i in range(n)],
        bindingConditions=["ok"])])], "spec.devices[0].bindingFailureConditions"),
    ("validValues", 10, lambda n: [slice_doc([_policy(n)])],
     "spec.devices[0].capacity.memory.requestPolicy.validValues"),
    ("requests", 32, lambda n: [claim_doc([request(f"r{i}") for i in range(n)])],
     "spec.devices.requests"),
    ("request selectors", 32, lambda n: [claim_doc([request(selectors=[_SELECTOR] * n)])],
     "spec.devices.requests[0].exactly.selectors"),
    ("subrequests", 8, lambda n: [claim_doc([{"name": "r", "firstAvailable": [
        {"name": f"s{i}", "deviceClassName": "gpu"} for i in range(n)]}])],
     "spec.devices.requests[0].firstAvailable"),
    ("tolerations", 16, lambda n: [claim_doc([request(tolerations=[
        {"operator": "Exists"}] * n)])], "spec.devices.requests[0].exactly.tolerations"),
    ("constraints", 32, lambda n: [claim_doc(constraints=[
        {"matchAttribute": "gpu.example.com/model"}] * n)], "spec.devices.constraints"),
    ("claim config", 32, lambda n: [claim_doc(config=[_OPAQUE] * n)],
     "spec.devices.config"),
    ("reservedFor", 256, lambda n: [claim_doc(status=_reserved(n))], "status.reservedFor"),
    ("results", 32, lambda n: [claim_doc(status=_results(n))],
     "status.allocation.devices.results"),
    ("allocation config", 64, lambda n: [claim_doc(status=_alloc_config(n))],
     "status.allocation.devices.config"),
    ("device conditions", 8, lambda n: [claim_doc(status=_conditions(n))],
     "status.devices[0].conditions"),
]


@pytest.mark.parametrize(("what", "bound", "build", "path"), LIMITS,
                         ids=[entry[0] for entry in LIMITS])
def test_list_limits(what, bound, build, path):
    assert problems(build(bound)) == []
    assert problems(build(bound + 1)) == [
        f"{path}: must have at most {bound} items, not {bound + 1}"]


def test_subrequests_need_at_least_one():
    assert problems([claim_doc([{"name": "r", "firstAvailable": []}])]) == [
        "spec.devices.requests[0].firstAvailable: must have at least 1 item(s), not 0"]


def test_names():
    bad = slice_doc([device("GPU_0")], driver="Gpu.example.com",
                    pool={"name": "a//b", "resourceSliceCount": 1})
    lines = problems([bad])
    assert any(line.startswith("spec.driver: invalid name 'Gpu.example.com'") for line in lines)
    assert any(line.startswith("spec.pool.name: invalid name 'a//b'") for line in lines)
    assert any(line.startswith("spec.devices[0].name: invalid name 'GPU_0'") for line in lines)
    long_driver = "d" * 61 + ".io"
    assert problems([slice_doc([device()], driver=long_driver)])[0].startswith(
        f"spec.driver: invalid name '{long_driver}': must be a driver name")
    assert problems([slice_doc([device()], driver="d" * 60 + ".io")]) == []
    pool = "/".join(["p" * 63] * 4)[:253]
    assert problems([slice_doc([device()], pool={"name": pool, "resourceSliceCount": 1})]) \
        == []
    assert len(problems([slice_doc([device()], pool={"name": pool + "p",
                                                     "resourceSliceCount": 1})])) == 1


def test_unique_names():
    lines = problems([slice_doc([device("a"), device("a")]),
                      claim_doc([request("r"), request("r")], name="c")])
    assert lines == [
        "spec.devices[1].name: duplicate name 'a' (also at spec.devices[0])",
        "spec.devices.requests[1].name: duplicate name 'r' (also at spec.devices.requests[0])"]


def test_unknown_fields_have_a_did_you_mean():
    assert problems([claim_doc([{"name": "r", "exactly": {"deviceClasName": "gpu"}}])]) == [
        "spec.devices.requests[0].exactly.deviceClassName: required field is missing",
        "spec.devices.requests[0].exactly.deviceClasName: unknown field (did you mean "
        "deviceClassName?)"]


def test_exactly_one_request_form_and_one_attribute_type():
    lines = problems([claim_doc([{"name": "r"}]),
                      slice_doc([device(attributes={"a": {"int": 1, "bool": True}})])])
    assert lines == [
        "spec.devices.requests[0]: exactly one of exactly, firstAvailable must be set",
        "spec.devices[0].attributes.a: exactly one of int, bool, string, version, ints, bools,"
        " strings, versions may be set, found int, bool"]


def test_subrequests_do_not_take_admin_access():
    assert problems([claim_doc([{"name": "r", "firstAvailable": [
        {"name": "s", "deviceClassName": "gpu", "adminAccess": True}]}])]) == [
        "spec.devices.requests[0].firstAvailable[0].adminAccess: unknown field"]
