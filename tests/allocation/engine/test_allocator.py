"""The backtracking search (``allocation/engine/allocator.py``): one want's short way."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine import allocator
from allocation.engine.allocator import Want, search
from allocation.engine.manifests import load_texts
from allocation.engine.scheduling.needs import Plans, no_negotiation, pod_needs
from allocation.engine.state import ClusterState
from tests.factories import (
    claim,
    claim_parameters,
    device,
    named_slice,
    node,
    pod,
    resource_class,
    to_yaml,
)

SELECTORS = ['quantities["memory"] >= "16Gi"', 'ints["index"] % 2 == 0', "true", "false"]


def _state(memories: list[int], selector: str) -> ClusterState:
    devices = [device(f"d{i}", memory=("quantity", f"{m}Gi"), index=("int", i))
               for i, m in enumerate(memories)]
    docs = [node("n0"), named_slice("n0", devices), resource_class("gpu"),
            claim_parameters("p", selector), claim("c", params="p"), pod("p", claims={"g": "c"})]
    return ClusterState.build(load_texts([("t.yaml", to_yaml(docs))]))


def _want(state: ClusterState) -> Want:
    needs = pod_needs(state, state.get("Pod", "default", "p"), Plans(), no_negotiation)
    [want] = needs.wants
    return want


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([8, 16, 32]), max_size=5), st.sampled_from(SELECTORS),
       st.sets(st.integers(0, 4)), st.integers(0, 2), st.booleans())
def test_one_want_is_searched_as_the_backtracking_search_would(memories, selector, held,
                                                               budget, on_node):
    """``search`` of one want (taken by ``_search_one``) gives the picks, the exhaustion and
    the devices left taken that the general search (``_Search``) gives, whatever is held,
    whatever the budget, on a node with or without the inventory."""
    results = []
    for general in (False, True):
        state = _state(memories, selector)
        want = _want(state)
        inventory = state.inventory_index[("n0", want.request.driver_name,
                                           want.request.model.name)]
        for i in sorted(held):
            if i < len(memories):
                inventory.take(inventory.devices[i], "someone")
        name = "n0" if on_node else "elsewhere"
        if general:
            run = allocator._Search(state.inventory_index, name, [want], "first-fit", budget)
            found = (run.chosen, False) if run.run(0) else (None, run.exhausted)
        else:
            found = search(state.inventory_index, name, [want], "first-fit", budget)
        picks, exhausted = found
        results.append(([c.id for _i, c in picks] if picks is not None else None, exhausted,
                         dict(inventory.holder)))
    assert results[0] == results[1]


def test_search_of_one_want_takes_the_short_way(monkeypatch):
    """One want goes through ``_search_one``; two go through the backtracking search."""
    state = _state([16, 16, 16], "true")
    want = _want(state)
    calls = []
    short = allocator._search_one
    monkeypatch.setattr(allocator, "_search_one", lambda *a: calls.append(a) or short(*a))
    picks, exhausted = search(state.inventory_index, "n0", [want])
    assert [c.id for _i, c in picks] == ["d0"] and not exhausted and len(calls) == 1
    other = Want("default/other", want.request)
    picks, exhausted = search(state.inventory_index, "n0", [other, other])
    assert [c.id for _i, c in picks] == ["d1", "d2"] and not exhausted
    assert len(calls) == 1
