"""allocation.engine.manifests.cel_sources: every CEL field of a document, with its path."""

from __future__ import annotations

from allocation.engine.manifests.cel_sources import cel_sources
from tests import factories as f
from tests import v1_cluster as v1


def _found(kind: str, doc: dict) -> list[tuple[str, str]]:
    return [(s.path, s.kind) for s in cel_sources(kind, doc)]


def test_seed_kinds():
    assert _found("ResourceClassParameters", f.class_parameters("p", "true")) == [
        ("filters[0].namedResourcesWithAttributes.selector", "selector")]
    assert _found("ResourceClaimParameters", f.claim_parameters("p", "a", "b")) == [
        ("requests[0].namedResourcesWithAttributes.required[0].selector", "selector"),
        ("requests[0].namedResourcesWithAttributes.required[1].selector", "selector")]
    assert _found("ResourceClaim", f.claim("c")) == []  # a seed claim has no CEL


def test_v1_kinds_and_misshapen_fields_are_skipped():
    assert _found("DeviceClass", v1.device_class()) == [
        ("spec.selectors[0].cel.expression", "device selector")]
    claim = v1.claim(selectors=[{"cel": {"expression": "true"}}, {"cel": "not a mapping"}])
    assert _found("ResourceClaim", claim) == [
        ("spec.devices.requests[0].exactly.selectors[0].cel.expression", "device selector")]
    assert _found("DeviceClass", {"spec": {"selectors": "nope"}}) == []
    assert _found("Node", f.node("n")) == []
