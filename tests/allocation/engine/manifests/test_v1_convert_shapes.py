"""What conversion, gated-field dropping and defaulting (``manifests/v1_convert.py``,
``v1/gated.py``) do with parts the schema has not checked yet: a part of the wrong type
is left for the schema to report, never assumed; a quantity written as a number and a
null where Go has a pointer or an int are read as the API server decodes them."""

from __future__ import annotations

import pytest

from allocation.engine.manifests import InvalidManifests, load_texts
from allocation.engine.manifests.v1_convert import prepare
from allocation.engine.v1 import make_profile
from allocation.engine.writer import to_yaml
from tests.allocation.engine.manifests.v1_docs import claim_doc, device, load, problems, slice_doc

BETA1 = "resource.k8s.io/v1beta1"
_TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
             "metadata": {"name": "t", "namespace": "default"}, "spec": {"spec": "gpu"}}


def _beta1(doc: dict) -> dict:
    return {**doc, "apiVersion": BETA1}


# Each found by fuzzing, where a traceback came before the schema's answer.
@pytest.mark.parametrize(("doc", "line"), [
    (claim_doc(["gpu"]), "spec.devices.requests[0]: must be an object, not string"),
    (claim_doc(1), "spec.devices.requests: must be a list, not integer"),
    ({**claim_doc(), "spec": {"devices": ["x"]}}, "spec.devices: must be an object, not list"),
    (claim_doc([{"name": "r", "firstAvailable": 1}]),
     "spec.devices.requests[0].firstAvailable: must be a list, not integer"),
    (claim_doc([{"name": "r", "firstAvailable": ["capacity"]}]),
     "spec.devices.requests[0].firstAvailable[0]: must be an object, not string"),
    (claim_doc(constraints=1), "spec.devices.constraints: must be a list, not integer"),
    (_TEMPLATE, "spec.spec: must be an object, not string"),
    (slice_doc(1), "spec.devices: must be a list, not integer"),
    (slice_doc([None]), "spec.devices[0]: must be an object, not null"),
    (slice_doc([device(capacity=["memory"])]),
     "spec.devices[0].capacity: must be an object, not list"),
    (slice_doc([device(capacity={"memory": 80})]),
     "spec.devices[0].capacity.memory: must be an object, not integer"),
    (_beta1(slice_doc(1)), "spec.devices: must be a list, not integer"),
    (_beta1(claim_doc(1)), "spec.devices.requests: must be a list, not integer"),
])
@pytest.mark.parametrize("release", ["1.34", "1.35", "1.36"])  # 1.35: gates off, fields dropped
def test_a_part_of_the_wrong_type_is_the_schemas_to_report(doc, line, release):
    assert line in problems([doc], release)


@pytest.mark.parametrize(("doc", "line"), [  # tolerations and taints: DRADeviceTaints, 1.36
    (claim_doc([{"name": "r", "exactly": {"deviceClassName": "gpu", "tolerations": True}}]),
     "spec.devices.requests[0].exactly.tolerations: must be a list, not boolean"),
    (slice_doc([device(taints=True)]), "spec.devices[0].taints: must be a list, not boolean"),
])
def test_a_gated_part_of_the_wrong_type_is_the_schemas_to_report(doc, line):
    assert line in problems([doc], "1.36")


def test_quantities_written_as_numbers_are_read_as_their_texts():
    capacity = {"value": 10, "requestPolicy": {"default": 1, "validValues": [1, 2.5, 10]}}
    ranged = {"value": 10, "requestPolicy": {"default": 2, "validRange": {
        "min": 2, "max": None, "step": 2}}}
    slice_ = slice_doc([device(allowMultipleAllocations=True,
                               capacity={"a": capacity, "b": ranged},
                               consumesCounters=[{"counterSet": "s",
                                                  "counters": {"c": {"value": 4}}}])])
    claim = claim_doc([{"name": "r", "exactly": {"deviceClassName": "gpu",
                                                 "capacity": {"requests": {"a": 2}}}}])
    profile = make_profile("1.36")
    spec = prepare(slice_, profile).data["spec"]
    assert spec["devices"][0]["capacity"] == {
        "a": {"value": "10", "requestPolicy": {"default": "1",
                                               "validValues": ["1", "2.5", "10"]}},
        "b": {"value": "10", "requestPolicy": {"default": "2", "validRange": {
            "min": "2", "step": "2"}}}}
    assert spec["devices"][0]["consumesCounters"][0]["counters"] == {"c": {"value": "4"}}
    request = prepare(claim, profile).data["spec"]["devices"]["requests"][0]["exactly"]
    assert request["capacity"] == {"requests": {"a": "2"}}
    assert problems([slice_, claim]) == []


def test_a_null_pool_generation_is_zero_as_go_decodes_it():
    [obj] = load([slice_doc([device()], pool={"name": "node-1", "generation": None,
                                              "resourceSliceCount": 1})]).objects
    assert obj.to_manifest()["spec"]["pool"]["generation"] == 0


def test_a_number_that_is_no_quantity_is_still_refused():
    text = to_yaml([slice_doc([device(capacity={"a": {"value": float("inf")}})])])
    with pytest.raises(InvalidManifests) as caught:
        load_texts([("v1.yaml", text)], make_profile("1.36"))
    assert "spec.devices[0].capacity.a.value" in str(caught.value)


def test_an_integer_past_a_float_s_range_is_refused_as_out_of_range():
    # math.isfinite(10**400) overflows: an integer is finite, its text the schema's to judge
    doc = slice_doc([device(capacity={"a": {"value": 10 ** 400}})])
    assert prepare(doc, make_profile("1.36")).data["spec"]["devices"][0]["capacity"] == {
        "a": {"value": "1" + "0" * 400}}
    [line] = problems([doc])
    assert "spec.devices[0].capacity.a.value: '10000000000000000000...' (401 chars) is out " \
        "of range" in line
