"""Finding a claim's and a class's parameters (``allocation/engine/parameters.py``)."""

from __future__ import annotations

from allocation.engine.events import VirtualClock
from allocation.engine.manifests import load_texts
from allocation.engine.objects import OpaqueObject, ResourceClaimParameters
from allocation.engine.parameters import (
    claim_parameters,
    class_parameters,
    names_builtin,
    vendor_snapshot,
)
from allocation.engine.state import ClusterState
from tests.factories import claim, resource_class, to_yaml

VENDOR = {"apiGroup": "gpu.example.com", "kind": "GpuConfig", "name": "big"}


def _state(docs: list[dict]) -> ClusterState:
    return ClusterState.build(load_texts([("t.yaml", to_yaml(docs))]), VirtualClock())


def _vendor(namespace: str | None = "default") -> dict:
    meta = {"name": "big", **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "gpu.example.com/v1", "kind": "GpuConfig", "metadata": meta,
            "spec": {"gpus": 2}}


def _generated(name: str = "from-big") -> dict:
    return {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimParameters",
            "metadata": {"name": name, "namespace": "default"},
            "generatedFrom": {"apiGroup": "gpu.example.com", "kind": "GpuConfig",
                              "name": "big"}}


def _vendor_claim() -> dict:
    doc = claim("c")
    doc["spec"]["parametersRef"] = VENDOR
    return doc


def test_builtin_kinds_are_told_apart_from_vendor_kinds_by_group():
    assert names_builtin({"kind": "ResourceClaimParameters", "name": "x"},
                         "ResourceClaimParameters")
    assert names_builtin({"apiGroup": "resource.k8s.io", "kind": "ResourceClaimParameters",
                          "name": "x"}, "ResourceClaimParameters")
    assert not names_builtin({"apiGroup": "x.example.com", "kind": "ResourceClaimParameters",
                              "name": "x"}, "ResourceClaimParameters")


def test_no_reference_finds_nothing_and_no_reason():
    state = _state([resource_class("gpu"), claim("c")])
    assert class_parameters(state, state.get("ResourceClass", None, "gpu")) == (None, None)
    assert claim_parameters(state, state.get("ResourceClaim", "default", "c")) == (None, None)


def test_a_missing_object_is_a_reason_naming_it():
    state = _state([resource_class("gpu", params="p"), claim("c", params="q")])
    assert class_parameters(state, state.get("ResourceClass", None, "gpu")).reason == \
        "resourceclassparameters 'p' of class 'gpu' not found"
    assert claim_parameters(state, state.get("ResourceClaim", "default", "c")).reason == \
        "resourceclaimparameters default/q not found"


def test_generated_parameters_stand_in_for_the_vendor_object_only_when_asked():
    state = _state([resource_class("gpu"), _vendor(), _generated(), _vendor_claim()])
    c = state.get("ResourceClaim", "default", "c")
    generated = claim_parameters(state, c).found
    assert isinstance(generated, ResourceClaimParameters) and generated.name == "from-big"
    vendor = claim_parameters(state, c, generated=False).found
    assert isinstance(vendor, OpaqueObject)
    assert vendor_snapshot(vendor) == _vendor()
    assert vendor_snapshot(generated) is None


def test_a_missing_vendor_object_is_named_with_kind_and_namespace():
    state = _state([resource_class("gpu"), _vendor_claim()])
    found = claim_parameters(state, state.get("ResourceClaim", "default", "c"))
    assert found == (None, "claim parameters GpuConfig default/big not found")
