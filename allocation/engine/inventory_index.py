"""A state's inventories by node, driver and model, each copied on its first use after a
fork (``ClusterState.fork``; docs/autoscaling.md, "What-if states").

A fork shares its parent's inventories. Each inventory carries the copy-on-write token of
the state that owns it alone (``ClusterState.cow_token``, replaced by every fork of either
state); looking one up through :class:`InventoryIndex` hands out the state's own copy, made
at the first look after a fork. Iterating the index (``values()``, ``items()``) gives
inventories that may be shared with a fork: read them, never take or release through them.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from allocation.engine.models import Inventory
    from allocation.engine.state import ClusterState

__all__ = ["InventoryIndex"]

InventoryKey = tuple[str, str, str]
"""``(node, driver, model)``."""


class InventoryIndex(dict):
    """``(node, driver, model) -> Inventory``; ``get`` and ``[]`` hand out the state's own
    copy."""

    def __init__(self, state: ClusterState, *args) -> None:
        super().__init__(*args)
        # weakly: a state and its index are no cycle, so a state nothing uses is freed by
        # reference counting, even frozen out of the collector's sight (a console's
        # baseline is: docs/scenarios.md, "The baseline")
        self._state = weakref.ref(state)

    def get(self, key, default=None):
        inventory = dict.get(self, key)
        if inventory is None:
            return default
        state = self._state()
        if getattr(inventory, "_cow_token", None) is not state.cow_token:
            inventory = self._own(state, key, inventory)
        return inventory

    def __getitem__(self, key):
        inventory = self.get(key)
        if inventory is None:
            raise KeyError(key)
        return inventory

    def register(self, key: InventoryKey, inventory: Inventory) -> None:
        """Add ``inventory``, built for this state alone, under ``key`` and to its node's
        list in ``state.inventories``."""
        state = self._state()
        inventory._cow_token = state.cow_token
        node = key[0]
        state.inventories[node] = [*state.inventories.get(node, ()), inventory]
        dict.__setitem__(self, key, inventory)

    def _own(self, state: ClusterState, key: InventoryKey, inventory: Inventory
             ) -> Inventory:
        """The state's own copy of ``inventory``, replacing it in the index and in its
        node's list (lists are replaced, never changed in place: a fork shares them)."""
        twin = inventory.clone()
        twin._cow_token = state.cow_token
        dict.__setitem__(self, key, twin)
        node = key[0]
        state.inventories[node] = [twin if i is inventory else i
                                   for i in state.inventories.get(node, ())]
        return twin
