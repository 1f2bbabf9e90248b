"""``simulation.refuse_v1``: v1 objects load but are not simulated yet (docs/v1.md)."""

from __future__ import annotations

import pytest

from allocation.engine.manifests import InvalidManifests
from allocation.engine.simulation import simulate
from tests.allocation.engine.manifests.v1_docs import class_doc, load
from tests.factories import node


def test_v1_objects_are_refused_with_a_problem_not_an_internal_error():
    loaded = load([node("node-1"), class_doc()])
    with pytest.raises(InvalidManifests) as exc:
        simulate(loaded)
    assert [str(p) for p in exc.value.problems] == [
        "v1.yaml:2 (DeviceClass gpu): apiVersion: resource.k8s.io/v1 DeviceClass objects are "
        "read and checked but not simulated yet (docs/v1.md)"]


def test_a_namespace_is_simulated_as_before():
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ops"}}
    output = simulate(load([node("node-1"), namespace])).output()
    assert [item["kind"] for item in output["items"]] == ["Node", "Namespace"]
