"""The v1 slice index kept with the state (``engine/v1_pools.py``): built with the state,
shared by forks, and answering as an index made afresh after the slices, classes or claims
change, in a kept state and in a fork."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from allocation.engine.manifests import build_object
from allocation.engine.objects import ResourceSlice
from allocation.engine.simulation import Simulation
from allocation.engine.state import ClusterState
from allocation.engine.v1 import make_profile
from allocation.engine.v1.pools import SliceIndex
from allocation.engine.v1_pools import slice_index, state_profile
from tests.allocation.engine.manifests.v1_docs import class_doc, device, load, slice_doc
from tests.factories import node


def _model(name: str, model: str) -> dict:
    return device(name, attributes={"model": {"string": model}})


def _template() -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "default"},
        "spec": {
            "spec": {
                "devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}
            }
        },
    }


def _pod(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "main", "image": "example/app"}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
        },
    }


def _docs() -> list[dict]:
    """node-1 with one device, node-2 with two: p1 on node-1, p2 on node-2, one left free."""
    return [
        node("node-1"),
        node("node-2"),
        class_doc(),
        _template(),
        slice_doc([_model("gpu-0", "A")], name="s1"),
        slice_doc(
            [_model("gpu-0", "A"), _model("gpu-1", "B")],
            name="s2",
            nodeName="node-2",
            pool={"name": "node-2", "resourceSliceCount": 1},
        ),
        _pod("p1"),
        _pod("p2"),
    ]


def _add(state: ClusterState, doc: dict) -> None:
    state.add(build_object(doc))


def _slice_updated(state: ClusterState) -> None:
    """node-1's slice gets a second device: a new pod fits there too."""
    _add(state, slice_doc([_model("gpu-0", "A"), _model("gpu-1", "A")], name="s1"))
    _add(state, _pod("p3"))
    _add(state, _pod("p4"))


def _slice_deleted(state: ClusterState) -> None:
    """node-2's slice is gone: its free device with it."""
    state.remove(state.get("ResourceSlice", None, "s2"))
    _add(state, _pod("p3"))


def _class_edited(state: ClusterState) -> None:
    """The class now takes model A only: node-2's free device (model B) no longer fits."""
    _add(
        state,
        class_doc(selectors=[{"cel": {"expression": 'device.attributes["model"].string == "A"'}}]),
    )
    _add(state, _pod("p3"))


def _claim_deleted(state: ClusterState) -> None:
    """p1 and its claim are gone: node-1's device is free again."""
    for obj in list(state.of_kind(type(state.get("Pod", "default", "p1")))):
        if obj.name == "p1":
            state.remove(obj)
    for claim in [c for c in state.claims() if c.name.startswith("p1-")]:
        state.remove(claim)
    _add(state, _pod("p3"))
    _add(state, _pod("p4"))


CHANGES: dict[str, Callable[[ClusterState], None]] = {
    "slice updated": _slice_updated,
    "slice deleted": _slice_deleted,
    "class edited": _class_edited,
    "claim deleted": _claim_deleted,
}


def _placed(output: dict) -> dict[str, str | None]:
    return {
        i["metadata"]["name"]: i["spec"].get("nodeName")
        for i in output["items"]
        if i["kind"] == "Pod"
    }


def _run(change: str, fork: bool, cached: bool) -> tuple[dict, dict]:
    """Settle, change (in a fork or the kept state), settle again: the changed simulation's
    output and the base's (settled again). ``cached=False``: the kept index is dropped
    before the second settle (every pool gathered afresh)."""
    base = Simulation.from_loaded(load(_docs()))
    base.settle()
    changed = base.fork() if fork else base
    CHANGES[change](changed.state)
    if not cached:
        changed.state.v1_pools = None
    changed.settle()
    base.settle()
    return changed.output(), base.output()


@pytest.mark.parametrize("fork", [False, True], ids=["kept", "fork"])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_the_kept_index_answers_as_a_fresh_one_after_a_change(change, fork):
    output, base = _run(change, fork, cached=True)
    fresh, fresh_base = _run(change, fork, cached=False)
    assert output == fresh
    assert base == fresh_base
    if fork:  # the base saw none of the fork's change
        assert _placed(base) == {"p1": "node-1", "p2": "node-2"}


def test_the_changes_above_change_placements():
    """Each change moves a placement, so a stale index would show in the outputs above."""
    placed = {change: _placed(_run(change, False, cached=False)[0]) for change in CHANGES}
    assert placed["slice updated"] == {
        "p1": "node-1",
        "p2": "node-2",
        "p3": "node-1",
        "p4": "node-2",
    }
    assert placed["slice deleted"]["p3"] is None
    assert placed["class edited"]["p3"] is None
    assert placed["claim deleted"] == {"p2": "node-2", "p3": "node-1", "p4": "node-2"}


def test_building_a_state_gathers_every_node_and_a_fork_shares_it(monkeypatch):
    state = Simulation.from_loaded(load(_docs())).state
    kept = state.v1_pools
    assert kept is not None
    assert [s.name for s in kept.slices] == ["s1", "s2"]

    def gather(*_args):
        raise AssertionError("gathered again")

    monkeypatch.setattr(SliceIndex, "_gather", gather)
    for name in ("node-1", "node-2"):  # answered from what building the state gathered
        pools = kept.index.pools_for({"metadata": {"name": name, "labels": {}}})
        assert [p.name for p in pools] == [name]
    child = state.fork()
    assert slice_index(child, state_profile(child)) is kept.index
    assert slice_index(state, state_profile(state)) is kept.index  # nothing changed


def test_another_profile_gets_its_own_index():
    state = Simulation.from_loaded(load(_docs())).state
    kept = state.v1_pools.index
    other = slice_index(state, make_profile("1.34"))
    assert other is not kept and other.profile == make_profile("1.34")


def test_a_state_without_slices_has_no_index():
    state = Simulation.from_loaded(load([node("node-1")])).state
    assert state.v1_pools is None
    assert not state.has(ResourceSlice)
