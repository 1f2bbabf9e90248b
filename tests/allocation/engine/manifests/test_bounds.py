"""Every field is validated where it stands: integers, quantities, timestamps, label keys,
container claims, handleData, vendor metadata (docs/manifests.md, "Bounds")."""

from __future__ import annotations

import pytest

from tests.factories import problems_of, to_yaml

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c"}]}}


def _pod(**changes) -> dict:
    doc = {**POD, "metadata": {**POD["metadata"]}, "spec": {**POD["spec"]}}
    for path, value in changes.items():
        section, _, key = path.partition("__")
        doc[section][key] = value
    return doc


def test_integers_are_int64():
    group = {"apiVersion": "draplanner.io/v1alpha1", "kind": "NodeGroup",
             "metadata": {"name": "g"}, "spec": {"maxSize": 2**63}}
    [line] = problems_of(to_yaml([group]))
    assert line == ("bad.yaml:1 (NodeGroup g): spec.maxSize: 9223372036854775808 does not fit "
                    "in a 64-bit integer (-9223372036854775808 to 9223372036854775807)")


def test_int_attribute_of_2_to_the_70_is_refused():
    slice_ = {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "NodeResourceSlice",
              "metadata": {"name": "s"}, "spec": {
                  "nodeName": "n", "driverName": "d.example.com",
                  "namedResourcesWithAttributes": [{"name": "g", "attributes": [
                      {"name": "big", "int": 2**70}, {"name": "huge", "quantity": "1e309"},
                      {"name": "many", "intSlice": [1, -(2**64)]}]}]}}
    lines = problems_of(to_yaml([slice_]))
    assert [line.split(": ")[1] for line in lines] == [
        "spec.namedResourcesWithAttributes[0].attributes[0].int",
        "spec.namedResourcesWithAttributes[0].attributes[1].quantity",
        "spec.namedResourcesWithAttributes[0].attributes[2].intSlice[1]"]
    assert "is out of range: a quantity's magnitude is at most 9223372036854775807" in lines[1]


@pytest.mark.parametrize("cpu", ["-100", "-1m", "-0.5"])
def test_negative_requests_are_refused(cpu):
    pod = _pod(spec__containers=[{"name": "c", "resources": {"requests": {"cpu": cpu}}}])
    [line] = problems_of(to_yaml([pod]))
    assert line.endswith(f"spec.containers[0].resources.requests.cpu: must be greater than "
                         f"or equal to 0, not {cpu}")


def test_negative_allocatable_is_refused():
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"allocatable": {"memory": "-1Gi"}}}
    [line] = problems_of(to_yaml([node]))
    assert line.endswith("status.allocatable.memory: must be greater than or equal to 0, "
                         "not -1Gi")


@pytest.mark.parametrize("field", ["deletionTimestamp", "creationTimestamp"])
def test_garbage_timestamps_are_refused(field):
    [line] = problems_of(to_yaml([_pod(metadata__name="p", **{f"metadata__{field}": "soon"})]))
    assert line == (f"bad.yaml:1 (Pod default/p): metadata.{field}: 'soon' is not an RFC 3339 "
                    "time such as 2025-01-01T00:00:00Z")


def test_timestamps_out_of_range_are_refused():
    [line] = problems_of(to_yaml([_pod(metadata__creationTimestamp="0001-01-01T00:00:00Z")]))
    assert "is out of range: times from 1970-01-01T00:00:00Z" in line


@pytest.mark.parametrize(("labels", "message"), [
    ({"bad key!": "v"}, "invalid key 'bad key!': must be a qualified name"),
    ({"-x": "v"}, "invalid key '-x': must be a qualified name"),
    ({"Bad_Prefix/x": "v"}, "the prefix 'Bad_Prefix' must be a DNS subdomain"),
    ({"k": "v" * 64}, "invalid label value"),
])
def test_invalid_label_keys_and_values(labels, message):
    [line] = problems_of(to_yaml([_pod(metadata__labels=labels)]))
    assert message in line and "(Pod default/p): metadata.labels." in line


def test_valid_labels_and_annotations_pass():
    pod = _pod(metadata__labels={"app.kubernetes.io/name": "x", "a_b.c-d": ""},
               metadata__annotations={"draplanner.io/explain": "{}"})
    assert problems_of(to_yaml([pod])) == []


def test_container_claims_must_be_declared_by_the_pod():
    pod = _pod(spec__containers=[{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}],
               spec__resourceClaims=[{"name": "net", "resourceClaimName": "n"}])
    [line] = problems_of(to_yaml([pod]))
    assert line == ("bad.yaml:1 (Pod default/p): spec.containers[0].resources.claims[0].name: "
                    "claim 'gpu' is not declared in spec.resourceClaims (declared: net)")


def test_a_container_uses_a_claim_or_each_of_its_requests_once():
    uses = [{"name": "gpu"}, {"name": "gpu", "request": "a"}, {"name": "gpu", "request": "b"},
            {"name": "gpu", "request": "a"}, {"name": "gpu"}]
    pod = _pod(spec__containers=[{"name": "c", "resources": {"claims": uses}}],
               spec__resourceClaims=[{"name": "gpu", "resourceClaimName": "g"}])
    assert problems_of(to_yaml([pod])) == [
        "bad.yaml:1 (Pod default/p): spec.containers[0].resources.claims[3].name: duplicate "
        "request 'a' of claim 'gpu' in this container",
        "bad.yaml:1 (Pod default/p): spec.containers[0].resources.claims[4].name: duplicate "
        "claim 'gpu' in this container"]


def test_handle_data_over_16_kib_is_refused_at_its_field():
    sim = {"apiVersion": "draplanner.io/v1alpha1", "kind": "DriverSimulation",
           "metadata": {"name": "d"},
           "spec": {"controllerName": "d.example.com", "handleData": "x" * (16 * 1024 + 1)}}
    [line] = problems_of(to_yaml([sim]))
    assert line.endswith("spec.handleData: is 16385 bytes, longer than the limit of 16384 "
                         "bytes")


@pytest.mark.parametrize("namespace", [{"a": "b"}, ["a"], 5])
def test_vendor_object_metadata_is_checked(namespace):
    vendor = {"apiVersion": "dra.example.com/v1", "kind": "CardParameters",
              "metadata": {"name": "x", "namespace": namespace}}
    [line] = problems_of(to_yaml([vendor]))
    assert "(CardParameters x): metadata.namespace: must be a string" in line


def test_valid_until_seconds_beyond_100_years_is_refused():
    request = {"apiVersion": "autoscaling.x-k8s.io/v1", "kind": "ProvisioningRequest",
               "metadata": {"name": "r"}, "spec": {
                   "provisioningClassName": "check-capacity.autoscaling.x-k8s.io",
                   "podSets": [{"podTemplateRef": {"name": "t"}, "count": 1}],
                   "parameters": {"ValidUntilSeconds": "99999999999999999999"}}}
    [line] = problems_of(to_yaml([request]))
    assert "ValidUntilSeconds must be at most 3153600000 seconds (100 years)" in line


def test_scheduling_gates_are_unique_and_not_on_a_bound_pod():
    pod = _pod(spec__nodeName="n1", spec__schedulingGates=[{"name": "a"}, {"name": "a"}])
    assert problems_of(to_yaml([pod])) == [
        "bad.yaml:1 (Pod default/p): spec.schedulingGates[1].name: Duplicate value: 'a'",
        "bad.yaml:1 (Pod default/p): spec.nodeName: Forbidden: cannot be set until all "
        "schedulingGates have been cleared"]
