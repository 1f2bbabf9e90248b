"""``manage.py simulate`` on bad resource.k8s.io/v1 input (spec section 1): every limit one
past its bound, quantity operators in v1 CEL, duplicate device names, a Pod field typo.
Exit 2, one line per problem naming the file, document, object and field, nothing
simulated, no traceback. And the inputs the contract says are not load errors (a missing
class, an unknown attribute domain, one device name in two slices of a pool): simulated,
exit 0, the pod pending with the scheduler's reason."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
import yaml
from django.core.management import call_command

from tests.allocation.engine.manifests.v1_docs import (
    claim_doc,
    class_doc,
    device,
    request,
    slice_doc,
)
from tests.factories import node, pod

DRIVER = "gpu.example.com"
_SELECTOR = {"cel": {"expression": "true"}}
_OPAQUE = {"opaque": {"driver": DRIVER, "parameters": {}}}
_RESULT = {"request": "r", "driver": DRIVER, "pool": "node-1", "device": "gpu-0"}
_LINE = re.compile(r"^\S+:\d+ \((\w+) ([^)]+)\): (\S+): .+$")


def _cluster(**replace) -> list[dict]:
    """A valid v1 cluster; ``replace`` swaps the ``slice``, ``klass``, ``claim`` or
    ``pod`` document, or adds ``extra`` documents."""
    docs = {
        "namespace": {"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": "default", "labels": {"resource.kubernetes.io/admin-access": "true"}}},
        "node": node("node-1"),
        "klass": class_doc(selectors=[{"cel": {"expression":
                                               f'device.driver == "{DRIVER}"'}}]),
        "slice": slice_doc([device(attributes={"model": {"string": "a"}},
                                   capacity={"memory": {"value": "16Gi"}})]),
        "claim": claim_doc(),
        "pod": pod("p", claims={"gpu": "c"}),
    }
    extra = replace.pop("extra", [])
    docs.update(replace)
    return [*docs.values(), *extra]


def _status(**fields) -> dict:
    return fields


def _dev(i: int = 0, **fields) -> dict:
    return device(f"d{i}", **fields)


# (id, documents, kind, object name, field path) -- each one past its bound
BAD = [
    ("driver name over 63", _cluster(slice=slice_doc([_dev()], driver="d" * 61 + ".io")),
     "ResourceSlice", "s1", "spec.driver"),
    ("pool name over 253", _cluster(slice=slice_doc([_dev()], pool={
        "name": "/".join(["p" * 63] * 4) + "/pp", "resourceSliceCount": 1})),
     "ResourceSlice", "s1", "spec.pool.name"),
    ("device name not a DNS label", _cluster(slice=slice_doc([device("GPU_0")])),
     "ResourceSlice", "s1", "spec.devices[0].name"),
    ("class selectors 33", _cluster(klass=class_doc(selectors=[_SELECTOR] * 33)),
     "DeviceClass", "gpu", "spec.selectors"),
    ("class config 33", _cluster(klass=class_doc(config=[_OPAQUE] * 33)),
     "DeviceClass", "gpu", "spec.config"),
    ("opaque parameters over 10 KiB", _cluster(klass=class_doc(config=[{"opaque": {
        "driver": DRIVER, "parameters": {"x": "y" * 10240}}}])),
     "DeviceClass", "gpu", "spec.config[0].opaque.parameters"),
    ("devices 129", _cluster(slice=slice_doc([_dev(i) for i in range(129)])),
     "ResourceSlice", "s1", "spec.devices"),
    ("devices 65 with taints", _cluster(slice=slice_doc([_dev(i, taints=[
        {"key": "k", "effect": "NoSchedule"}]) for i in range(65)])),
     "ResourceSlice", "s1", "spec.devices"),
    ("counter sets 9", _cluster(extra=[slice_doc(name="counters", nodeName=None,
                                                  sharedCounters=[
        {"name": f"s{i}", "counters": {"c": {"value": "1"}}} for i in range(9)])]),
     "ResourceSlice", "counters", "spec.sharedCounters"),
    ("counters 33 in a set", _cluster(extra=[slice_doc(name="counters", nodeName=None,
                                                        sharedCounters=[
        {"name": "s", "counters": {f"c{i}": {"value": "1"} for i in range(33)}}])]),
     "ResourceSlice", "counters", "spec.sharedCounters[0].counters"),
    ("attributes and capacity 33", _cluster(slice=slice_doc([_dev(
        attributes={f"a{i}": {"int": i} for i in range(17)},
        capacity={f"c{i}": {"value": "1"} for i in range(16)})])),
     "ResourceSlice", "s1", "spec.devices[0]"),
    ("string attribute 65 characters", _cluster(slice=slice_doc([_dev(
        attributes={"model": {"string": "x" * 65}})])),
     "ResourceSlice", "s1", "spec.devices[0].attributes.model.string"),
    ("version not strict semver", _cluster(slice=slice_doc([_dev(
        attributes={"v": {"version": "v1.2"}})])),
     "ResourceSlice", "s1", "spec.devices[0].attributes.v.version"),
    ("attribute id 33 characters", _cluster(slice=slice_doc([_dev(
        attributes={"a" * 33: {"int": 1}})])),
     "ResourceSlice", "s1", "spec.devices[0].attributes." + "a" * 33),
    ("validValues 11", _cluster(slice=slice_doc([_dev(
        allowMultipleAllocations=True, capacity={"m": {"value": "100", "requestPolicy": {
            "default": "1", "validValues": [str(i + 1) for i in range(11)]}}})])),
     "ResourceSlice", "s1", "spec.devices[0].capacity.m.requestPolicy.validValues"),
    ("consumesCounters 3", _cluster(slice=slice_doc([_dev(consumesCounters=[
        {"counterSet": f"s{i}", "counters": {"c": {"value": "1"}}} for i in range(3)])])),
     "ResourceSlice", "s1", "spec.devices[0].consumesCounters"),
    ("taints 17", _cluster(slice=slice_doc([_dev(taints=[
        {"key": f"k{i}", "effect": "NoSchedule"} for i in range(17)])])),
     "ResourceSlice", "s1", "spec.devices[0].taints"),
    ("bindingConditions 5", _cluster(slice=slice_doc([_dev(
        bindingConditions=[f"c{i}" for i in range(5)], bindingFailureConditions=["f"])])),
     "ResourceSlice", "s1", "spec.devices[0].bindingConditions"),
    ("consumed counters 33 in one set", _cluster(slice=slice_doc([_dev(consumesCounters=[
        {"counterSet": "s", "counters": {f"c{i}": {"value": "1"} for i in range(33)}}])])),
     "ResourceSlice", "s1", "spec.devices[0].consumesCounters[0].counters"),
    ("bindingFailureConditions 5", _cluster(slice=slice_doc([_dev(
        bindingConditions=["ok"], bindingFailureConditions=[f"f{i}" for i in range(5)])])),
     "ResourceSlice", "s1", "spec.devices[0].bindingFailureConditions"),
    ("attribute domain over 63", _cluster(slice=slice_doc([_dev(
        attributes={"d" * 61 + ".io/model": {"int": 1}})])),
     "ResourceSlice", "s1", "spec.devices[0].attributes." + "d" * 61 + ".io/model"),
    ("request name not a DNS label", _cluster(claim=claim_doc([request("R_1")])),
     "ResourceClaim", "default/c", "spec.devices.requests[0].name"),
    ("requests 33", _cluster(claim=claim_doc([request(f"r{i}") for i in range(33)])),
     "ResourceClaim", "default/c", "spec.devices.requests"),
    ("request selectors 33", _cluster(claim=claim_doc([request(selectors=[_SELECTOR] * 33)])),
     "ResourceClaim", "default/c", "spec.devices.requests[0].exactly.selectors"),
    ("subrequests 9", _cluster(claim=claim_doc([{"name": "r", "firstAvailable": [
        {"name": f"s{i}", "deviceClassName": "gpu"} for i in range(9)]}])),
     "ResourceClaim", "default/c", "spec.devices.requests[0].firstAvailable"),
    ("tolerations 17", _cluster(claim=claim_doc([request(tolerations=[
        {"operator": "Exists"}] * 17)])),
     "ResourceClaim", "default/c", "spec.devices.requests[0].exactly.tolerations"),
    ("constraints 33", _cluster(claim=claim_doc(constraints=[
        {"matchAttribute": f"{DRIVER}/model"}] * 33)),
     "ResourceClaim", "default/c", "spec.devices.constraints"),
    ("claim config 33", _cluster(claim=claim_doc(config=[_OPAQUE] * 33)),
     "ResourceClaim", "default/c", "spec.devices.config"),
    ("count -1", _cluster(claim=claim_doc([request(count=-1)])),
     "ResourceClaim", "default/c", "spec.devices.requests[0].exactly.count"),
    ("CEL over 10 KiB", _cluster(claim=claim_doc([request(selectors=[{"cel": {
        "expression": "true && " * 1300 + "true"}}])])),
     "ResourceClaim", "default/c", "spec.devices.requests[0].exactly.selectors[0].cel"
                                   ".expression"),
    ("reservedFor 257", _cluster(claim=claim_doc(status=_status(reservedFor=[
        {"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(257)]))),
     "ResourceClaim", "default/c", "status.reservedFor"),
    ("results 33", _cluster(claim=claim_doc(status=_status(allocation={"devices": {
        "results": [_RESULT] * 33}}))),
     "ResourceClaim", "default/c", "status.allocation.devices.results"),
    ("allocation config 65", _cluster(claim=claim_doc(status=_status(allocation={
        "devices": {"config": [{"source": "FromClass", **_OPAQUE}] * 65}}))),
     "ResourceClaim", "default/c", "status.allocation.devices.config"),
    ("device conditions 9", _cluster(claim=claim_doc(status=_status(devices=[
        {"driver": DRIVER, "pool": "node-1", "device": "gpu-0", "conditions": [
            {"type": f"t{i}", "status": "True"} for i in range(9)]}]))),
     "ResourceClaim", "default/c", "status.devices[0].conditions"),
    ("quantity operator in a class", _cluster(klass=class_doc(selectors=[{"cel": {
        "expression": f'device.capacity["{DRIVER}"].memory >= "8Gi"'}}])),
     "DeviceClass", "gpu", "spec.selectors[0].cel.expression"),
    ("quantity operator in a claim", _cluster(claim=claim_doc([request(selectors=[{"cel": {
        "expression": 'device.capacity["x.example.com"].memory >= "8Gi"'}}])])),
     "ResourceClaim", "default/c", "spec.devices.requests[0].exactly.selectors[0].cel"
                                   ".expression"),
    ("duplicate device name in a slice", _cluster(slice=slice_doc([_dev(), _dev()])),
     "ResourceSlice", "s1", "spec.devices[1].name"),
    ("pod field typo", _cluster(pod={**pod("p", claims={"gpu": "c"}), "spec": {
        **pod("p", claims={"gpu": "c"})["spec"], "nodeSelecter": {"a": "b"}}}),
     "Pod", "default/p", "spec.nodeSelecter"),
]


def _run(tmp_path, docs: list[dict]) -> tuple[int, str, str]:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    out, err = StringIO(), StringIO()
    code = 0
    try:
        call_command("simulate", str(path), "-o", "json", stdout=out, stderr=err)
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue(), err.getvalue()


def test_the_valid_cluster_is_simulated(tmp_path):
    code, out, err = _run(tmp_path, _cluster())
    assert code == 0, err
    pods = [i for i in json.loads(out)["items"] if i["kind"] == "Pod"]
    assert pods[0]["spec"]["nodeName"] == "node-1"


@pytest.mark.parametrize(("docs", "kind", "name", "path"), [case[1:] for case in BAD],
                         ids=[case[0] for case in BAD])
def test_bad_input_exits_2_naming_the_object_and_field(tmp_path, docs, kind, name, path):
    code, out, err = _run(tmp_path, docs)
    assert code == 2, err
    assert out == "" and "Traceback" not in err
    *problems, summary = err.splitlines()
    assert summary.endswith("problem(s); nothing was simulated.")
    assert problems and all(_LINE.match(line) for line in problems), problems
    found = [_LINE.match(line).groups() for line in problems]
    assert (kind, name, path) in found, problems


def _pending_reason(tmp_path, docs: list[dict]) -> str:
    code, out, err = _run(tmp_path, docs)
    assert code == 0, err
    pods = [i for i in json.loads(out)["items"] if i["kind"] == "Pod"]
    assert "nodeName" not in pods[0]["spec"]
    return pods[0]["status"]["conditions"][0]["message"]


def test_a_missing_class_leaves_the_pod_pending(tmp_path):
    # spec 3.1: "request R: device class C does not exist", a scheduling reason
    docs = _cluster(claim=claim_doc([request(deviceClassName="absent")]))
    assert "device class absent does not exist" in _pending_reason(tmp_path, docs)


def test_an_unknown_attribute_domain_is_an_empty_map(tmp_path):
    # spec 2: an unknown domain returns an empty map, so the selector is false
    docs = _cluster(claim=claim_doc([request(selectors=[{"cel": {
        "expression": 'device.attributes["x.example.com"].size() > 0'}}])]))
    assert "cannot allocate all claims" in _pending_reason(tmp_path, docs)


def test_one_device_name_in_two_slices_of_a_pool_makes_the_pool_invalid(tmp_path):
    # spec 3.2 step 5: an invalid pool, "invalid resource pools were encountered"
    pool = {"name": "node-1", "resourceSliceCount": 2}
    docs = _cluster(slice=slice_doc([_dev()], pool=pool),
                    extra=[slice_doc([_dev()], name="s2", pool=pool)])
    assert "invalid resource pools were encountered" in _pending_reason(tmp_path, docs)
