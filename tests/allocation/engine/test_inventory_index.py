"""A state's inventories copied on first look-up after a fork
(``allocation/engine/inventory_index.py``); whole forks are in ``test_state.py``."""

from __future__ import annotations

from allocation.engine.manifests import load_texts
from allocation.engine.state import ClusterState
from tests.factories import device, named_slice, node, resource_class, to_yaml

KEY = ("n0", "cards.dra.example.com", "namedResourcesWithAttributes")


def _state() -> ClusterState:
    docs = [resource_class("gpu"), node("n0"), named_slice("n0", [device("d0"), device("d1")])]
    return ClusterState.build(load_texts([("in.yaml", to_yaml(docs))]))


def test_a_state_alone_looks_up_its_own_inventory_without_a_copy():
    state = _state()
    [registered] = state.inventories["n0"]
    assert state.inventory_index[KEY] is registered
    assert state.inventory_index.get(KEY) is registered
    assert state.inventory_index.get(("n9", "x", "y"), "none") == "none"


def test_after_a_fork_each_state_copies_at_its_first_look_up_and_keeps_its_copy():
    """Both states share the inventory until each looks it up: then each gets its own copy,
    in the index and in its node's list, and later look-ups give that copy; iterating the
    index gives what is there without copying."""
    state = _state()
    [shared] = state.inventories["n0"]
    fork = state.fork()
    assert list(fork.inventory_index.values()) == [shared]  # no copy made by iterating
    mine = fork.inventory_index[KEY]
    assert mine is not shared and fork.inventory_index[KEY] is mine
    assert fork.inventories["n0"] == [mine] and state.inventories["n0"] == [shared]
    mine.take(mine.devices[0], "default/x")
    parents = state.inventory_index[KEY]
    assert parents is not shared and parents.holder == {} and shared.holder == {}
    assert state.inventories["n0"] == [parents]
