"""The model registry: a toy model from the test suite allocates with no change elsewhere."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from allocation.engine.manifests import InvalidManifests, load_texts
from allocation.engine.manifests.schema import Int, ListOf, Obj, Str
from allocation.engine.models import (
    Candidate,
    Inventory,
    Refusal,
    Request,
    StructuredModel,
    registry,
)
from allocation.engine.simulation import simulate


class _TokenInventory(Inventory):
    """``count`` interchangeable tokens per slice; each is free or held by one claim."""

    def __init__(self, model: StructuredModel, node: str, driver: str, count: int) -> None:
        self.model, self.node_name, self.driver_name = model, node, driver
        self.tokens = [Candidate(f"token-{i}", i) for i in range(count)]
        self.holder: dict[str, str] = {}

    def candidates(self, request: Request, strategy: str,
                   refusals: list[Refusal] | None = None) -> Iterator[Candidate]:
        for token in self.tokens:
            if token.id in self.holder:
                if refusals is not None:
                    refusals.append(Refusal(token.id, f"held by {self.holder[token.id]}"))
                continue
            yield token

    def take(self, candidate: Candidate, owner: str) -> None:
        if self.holder.get(candidate.id, owner) != owner:
            raise ValueError(f"{candidate.id} is held")
        self.holder[candidate.id] = owner

    def release(self, candidate: Candidate, owner: str) -> None:
        if self.holder.get(candidate.id) == owner:
            del self.holder[candidate.id]

    def resolve(self, item: dict) -> Candidate | str:
        return next((t for t in self.tokens if t.id == item.get("id")), "no such token")


class _TokenModel(StructuredModel):
    name = "toyTokens"
    finalizer = "toy.example.com/delete-protection"
    source = "slice"
    slice_schema = Obj({"count": Int(minimum=0)}, required=("count",))
    request_schema = Obj({"count": Int(minimum=1)}, required=("count",))
    result_schema = Obj({"tokens": ListOf(Obj({"id": Str()}, required=("id",)))},
                        required=("tokens",))

    def build_inventory(self, node_name: str, driver_name: str,
                        published: Sequence[Any]) -> _TokenInventory:
        return _TokenInventory(self, node_name, driver_name,
                               sum(value["count"] for value in published))

    def compile_requests(self, driver_name: str, value: Any, filters: Sequence[Any],
                         label: str) -> list[Request]:
        return [Request(driver_name, self, label=f"{label}.count[{i}]",
                        key=(driver_name, self.name)) for i in range(value["count"])]

    def encode_result(self, picks: Sequence[Candidate]) -> dict:
        return {"tokens": [{"id": c.id} for c in picks]}

    def result_items(self, value: dict) -> list[dict]:
        return list(value.get("tokens") or ())


@pytest.fixture
def toy_model():
    model = _TokenModel()
    registry.register(model)
    try:
        yield model
    finally:
        registry.unregister(model.name)


MANIFESTS = """
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: resource.k8s.io/v1alpha2
kind: NodeResourceSlice
metadata: {name: n1-tokens}
spec: {nodeName: n1, driverName: toy.example.com, toyTokens: {count: 3}}
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClass
metadata: {name: toy}
driverName: toy.example.com
structuredParameters: true
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaimParameters
metadata: {name: two}
requests: [{driverName: toy.example.com, toyTokens: {count: 2}}]
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaimTemplate
metadata: {name: two}
spec:
  spec:
    resourceClassName: toy
    parametersRef: {apiGroup: resource.k8s.io, kind: ResourceClaimParameters, name: two}
""" + "".join(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: p{i}}}
spec:
  containers: [{{name: main}}]
  resourceClaims: [{{name: t, source: {{resourceClaimTemplateName: two}}}}]
""" for i in range(2))


def test_a_new_model_allocates_through_the_normal_pipeline(toy_model) -> None:
    state = simulate(load_texts([("toy.yaml", MANIFESTS)])).state
    claim = state.get("ResourceClaim", "default", "p0-t")
    data = claim.allocation.handles[0]["structuredData"]
    assert data["toyTokens"] == {"tokens": [{"id": "token-0"}, {"id": "token-1"}]}
    assert claim.meta.finalizers == ["toy.example.com/delete-protection"]
    assert state.get("Pod", "default", "p0").node_name == "n1"
    assert state.get("Pod", "default", "p1").node_name is None  # one token left, needs two


def test_the_models_schemas_are_validated_like_built_in_ones(toy_model) -> None:
    with pytest.raises(InvalidManifests, match=r"toyTokens.cuont: unknown field \(did you "
                       r"mean count\?\)"):
        load_texts([("toy.yaml", MANIFESTS.replace("toyTokens: {count: 3}",
                                                   "toyTokens: {count: 3, cuont: 1}"))])


def test_unregistered_models_are_unknown_again() -> None:
    assert registry.get("toyTokens") is None
    with pytest.raises(InvalidManifests, match="toyTokens: unknown field"):
        load_texts([("toy.yaml", MANIFESTS)])


def test_built_in_models_are_registered() -> None:
    names = [m.name for m in registry.all_models()]
    assert names[:3] == ["namedResourcesWithAttributes", "partitionable", "counter"]
    assert registry.by_finalizer()["numeric.dra.k8s.io/delete-protection"].name == "counter"
