"""The kind registry (``allocation/engine/kinds.py``)."""

from __future__ import annotations

import dataclasses

import pytest

from allocation.engine import kinds
from allocation.engine.manifests.kinds import schema_of
from allocation.engine.objects import KIND_CLASSES, OpaqueObject
from tests.factories import problems_of


def test_documents_are_matched_by_api_version_and_kind():
    assert kinds.lookup("resource.k8s.io/v1alpha2", "ResourceClaim") is kinds.RESOURCE_CLAIM
    assert all(kinds.lookup(f"resource.k8s.io/{v}", "ResourceClaim") is kinds.RESOURCE_CLAIM_V1
               for v in ("v1beta1", "v1beta2", "v1"))
    assert kinds.lookup("resource.k8s.io/v1alpha3", "ResourceClaim") is None
    assert kinds.RESOURCE_CLAIM_V1.preferred_version == "resource.k8s.io/v1"
    assert kinds.lookup("gpu.example.com/v1", "GpuConfig") is None
    both = ("autoscaling.x-k8s.io/v1beta1", "autoscaling.x-k8s.io/v1")
    assert all(kinds.lookup(v, "ProvisioningRequest") is kinds.PROVISIONING_REQUEST
               for v in both)
    assert kinds.PROVISIONING_REQUEST.preferred_version == "autoscaling.x-k8s.io/v1"
    assert kinds.NODE.api_versions == ("v1",)


def test_every_spec_has_a_schema_and_each_api_version_kind_pair_one_spec():
    pairs = [(v, k.name) for k in kinds.KINDS for v in k.api_versions]
    assert len(pairs) == len(set(pairs))
    assert all(schema_of(spec) is not None for spec in kinds.KINDS)
    # Events and Namespaces are kept as they are written (OpaqueObject).
    assert set(KIND_CLASSES) == set(kinds.KINDS) - {kinds.EVENT, kinds.NAMESPACE}


def test_engine_classes_take_name_scope_and_version_from_their_spec():
    for spec, cls in KIND_CLASSES.items():
        assert (cls.kind, cls.namespaced, cls.default_api_version) == (
            spec.name, spec.namespaced, spec.preferred_version)


def test_one_kind_name_may_be_served_by_several_specs(monkeypatch):
    newer = kinds.RESOURCE_CLAIM_V1
    assert kinds.specs_named("ResourceClaim") == (kinds.RESOURCE_CLAIM, newer)
    assert kinds.namespaced("ResourceClaim") is True
    cluster = dataclasses.replace(newer, namespaced=False)
    # the index by name (kinds.KINDS is a constant, indexed once at import)
    monkeypatch.setitem(kinds._BY_NAME, "ResourceClaim", (kinds.RESOURCE_CLAIM, newer, cluster))
    kinds.namespaced.cache_clear()  # the answers by name are kept (the table is constant)
    with pytest.raises(ValueError, match="namespaced in some API versions only"):
        kinds.namespaced("ResourceClaim")


def test_scope_of_unknown_kinds_is_unknown_and_vendor_objects_default_to_namespaced():
    assert kinds.namespaced("GpuConfig") is None
    assert kinds.namespaced("Node") is False
    assert OpaqueObject({"kind": "GpuConfig", "metadata": {"name": "x"}}).namespace == "default"


def test_a_wrong_version_lists_every_version_of_the_kind():
    text = "apiVersion: autoscaling.x-k8s.io/v2\nkind: ProvisioningRequest\nmetadata: {name: x}\n"
    assert problems_of(text) == [
        "bad.yaml:1 (ProvisioningRequest default/x): apiVersion: 'autoscaling.x-k8s.io/v2' is "
        "not supported for ProvisioningRequest; use autoscaling.x-k8s.io/v1beta1 or "
        "autoscaling.x-k8s.io/v1"]


def test_specs_compare_and_hash_by_their_declared_fields():
    # The cached hash and the identity shortcut keep the dataclass's own equality.
    copy = kinds.KindSpec("", "Pod", ("v1",), True)
    assert copy is not kinds.POD and copy == kinds.POD and hash(copy) == hash(kinds.POD)
    assert {copy: 1}[kinds.POD] == 1
    assert hash(kinds.POD) == hash(("", "Pod", ("v1",), True))
    others = (kinds.KindSpec("", "Pod", ("v1",), False), kinds.KindSpec("x", "Pod", ("v1",), True),
              kinds.KindSpec("", "Pod", ("v2",), True), kinds.NODE, ("", "Pod"))
    for other in others:
        assert copy != other and other != kinds.POD
    assert set(kinds.V1_KINDS) == kinds.V1_KIND_SET
    assert copy not in kinds.V1_KIND_SET and kinds.RESOURCE_SLICE in kinds.V1_KIND_SET
