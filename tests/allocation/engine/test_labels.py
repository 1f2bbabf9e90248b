"""Node selectors (allocation/engine/labels.py): the nodes a selector can name at most."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from allocation.engine.labels import named_nodes, node_selector_matches

NODES = [NS(name=f"n{i}", meta=NS(labels={"zone": "a" if i % 2 else "b"})) for i in range(6)]


def _name_in(*names: str) -> dict:
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


def _zone(value: str) -> dict:
    return {"key": "zone", "operator": "In", "values": [value]}


SELECTORS = [
    {"nodeSelectorTerms": [{"matchFields": [_name_in("n3")]}]},
    {"nodeSelectorTerms": [{"matchFields": [_name_in("n1", "n2")],
                            "matchExpressions": [_zone("a")]}]},
    {"nodeSelectorTerms": [{"matchFields": [_name_in("n1")]},
                           {"matchFields": [_name_in("n4", "gone")]}, {}]},
    {"nodeSelectorTerms": [{"matchFields": [_name_in("n1"), _name_in("n2")]}]},
    {"nodeSelectorTerms": []},
    {"nodeSelectorTerms": [{"matchFields": [_name_in()]}]},
]


@pytest.mark.parametrize("selector", SELECTORS)
def test_no_node_outside_the_named_ones_matches(selector) -> None:
    names = named_nodes(selector)
    assert names is not None
    matching = {n.name for n in NODES if node_selector_matches(selector, n)}
    assert matching <= names


@pytest.mark.parametrize("selector", [
    {"nodeSelectorTerms": [{"matchExpressions": [_zone("a")]}]},
    {"nodeSelectorTerms": [{"matchFields": [_name_in("n1")]},
                           {"matchExpressions": [_zone("b")]}]},
    {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "NotIn",
                                             "values": ["n1"]}]}]},
])
def test_a_term_that_may_match_any_name_names_no_nodes(selector) -> None:
    assert named_nodes(selector) is None
    assert len({n.name for n in NODES if node_selector_matches(selector, n)}) > 1


def test_a_pin_names_its_node() -> None:
    assert named_nodes(SELECTORS[0]) == {"n3"}
    assert named_nodes(SELECTORS[2]) == {"n1", "n4", "gone"}
