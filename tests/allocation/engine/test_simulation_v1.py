"""``simulation.refuse_unsimulated_v1``: which v1 objects `simulate` refuses (docs/v1.md)."""

from __future__ import annotations

import pytest

from allocation.engine.manifests import InvalidManifests
from allocation.engine.simulation import simulate
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, load, request
from tests.factories import node, pod


def _template_doc(name: str = "t") -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [request()]}}}}


def test_v1_templates_are_refused_with_a_problem_not_an_internal_error():
    loaded = load([node("node-1"), class_doc(), _template_doc()])
    with pytest.raises(InvalidManifests) as exc:
        simulate(loaded)
    assert [str(p) for p in exc.value.problems] == [
        "v1.yaml:3 (ResourceClaimTemplate default/t): apiVersion: resource.k8s.io/v1 "
        "ResourceClaimTemplate objects are read and checked but not simulated yet "
        "(docs/v1.md)"]


def test_a_pod_naming_a_v1_claim_and_a_template_is_refused():
    loaded = load([node("node-1"), class_doc(), claim_doc(),
                   pod("p", claims={"gpu": "c"}, templates={"more": "seed-template"})])
    with pytest.raises(InvalidManifests) as exc:
        simulate(loaded)
    assert [str(p) for p in exc.value.problems] == [
        "v1.yaml:4 (Pod default/p): spec.resourceClaims: a pod with resource.k8s.io/v1 "
        "claims must name all its claims by resourceClaimName, all of them v1, to be "
        "simulated yet (docs/v1.md)"]


def test_a_device_class_alone_is_simulated():
    output = simulate(load([node("node-1"), class_doc()])).output()
    assert [item["kind"] for item in output["items"]] == ["Node", "DeviceClass"]


def test_a_namespace_is_simulated_as_before():
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ops"}}
    output = simulate(load([node("node-1"), namespace])).output()
    assert [item["kind"] for item in output["items"]] == ["Node", "Namespace"]
