from __future__ import annotations

from allocation.engine.manifests import load_texts
from allocation.engine.objects.clone import clone
from allocation.engine.simulation import simulate
from tests.factories import claim, device, named_slice, node, pod, resource_class, to_yaml


def _allocated_claim():
    docs = [node("n0"), named_slice("n0", [device("gpu-0")]), resource_class("gpu"),
            claim("c", "gpu"), pod("p", {"c": "c"})]
    state = simulate(load_texts([("c.yaml", to_yaml(docs))])).state
    return state.get("ResourceClaim", "default", "c")


def test_a_clone_owns_its_mutable_parts_and_shares_the_document() -> None:
    original = _allocated_claim()
    assert original.allocation is not None and original.reserved_for
    labels, reserved = dict(original.meta.labels), list(original.reserved_for)
    picks = list(original.allocation.picks)
    twin = clone(original)
    twin.meta.labels["x"] = "y"
    twin.meta.annotations["x"] = "y"
    twin.meta.finalizers.append("f")
    twin.reserved_for.append({"name": "other"})
    twin.allocation.picks.clear()
    assert original.meta.labels == labels and "x" not in original.meta.annotations
    assert "f" not in original.meta.finalizers
    assert original.reserved_for == reserved and original.allocation.picks == picks
    assert twin.raw is original.raw and twin.source is original.source
