"""Bringing a settled state up to date with changed objects, as a rebuild would have it.

The console's worker keeps the state it settled between passes (docs/console.md, "The
worker") and applies what was written since (new, replaced and deleted objects) instead of
building the whole cluster again. :func:`apply_changes` makes the state equal to
``ClusterState.build`` of the changed documents: objects in document order (a replaced
object keeps its place, a new one goes last), node order, inventories and usage rebuilt when
nodes, seed slices or capacities changed, seed allocations given back and taken again where
they changed, usage adjusted for pods otherwise. What a rebuild would refuse (a problem
naming an object) is not repaired here: the caller rebuilds instead.

Whole nodes removed (a node with its slices and capacities, the claims allocated there
deallocated: a scenario's ``remove-node``, docs/scenarios.md) are taken out of the node
order, inventories and usage without rebuilding the others: a rebuild would take every
other claim's devices again, the very ones it holds, and copying every allocated claim to
do so made a removal touch the whole cluster (every pod and claim then visited again).
For the same reason a seed claim whose allocation changed (allocated elsewhere, say by the
worker, and read back by a console's baseline: docs/scenarios.md "The baseline") gives back
what its old version held and takes what its new one names, in the inventories it
concerns; only a change of what nodes publish rebuilds them all.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from allocation.engine.input_status import take_result
from allocation.engine.objects import (
    KObject,
    Node,
    NodeResourceCapacity,
    NodeResourceSlice,
    ObjectKey,
    OpaqueObject,
    Pod,
    ResourceClaim,
)

if TYPE_CHECKING:
    from allocation.engine.state import ClusterState

__all__ = ["apply_changes"]

_INDEXED = (Node, NodeResourceSlice, NodeResourceCapacity)
"""Kinds behind the node order and the seed inventories (``ClusterState.reindex``)."""


def apply_changes(state: ClusterState, gone: Iterable[ObjectKey],
                  objects: Iterable[KObject]) -> bool:
    """Remove the objects at ``gone`` and put ``objects`` (new documents, in document
    order) in their place or, when new, last.

    ``objects`` must be fresh objects (loaded from their documents, not used by another
    state), as a rebuild would load them. The state must not be forked.

    Returns:
        True when the state is as a rebuild would build it; False when a rebuild would
        report a problem (a pod bound to a missing node, an allocation it cannot take):
        the caller must rebuild, the state is then not to be used.
    """
    reindex = False
    only_new_pods = True  # nothing that could make a node take what it refused
    pods: list[tuple[Pod | None, Pod | None]] = []
    released: list[ResourceClaim] = []  # allocated claims whose devices are given back
    taken: list[ResourceClaim] = []  # allocated claims whose devices are taken
    gone = list(gone)
    removed_nodes = {key.name for key in gone if key.kind == "Node"}
    unexplained = False  # a published change other than a whole node's removal
    for key in gone:
        only_new_pods = False
        old = state.objects.get(key)
        if old is not None:
            if _published(old):
                reindex = True
                unexplained |= not _on(old, removed_nodes)
            if _allocated(old):
                released.append(old)
            pods.append((old if isinstance(old, Pod) else None, None))
            _drop(state, old)
    for obj in objects:
        old = state.objects.get(obj.key)
        only_new_pods &= old is None and isinstance(obj, Pod)
        if _published(obj) or (old is not None and _published(old)):
            reindex = True
            unexplained |= _published(obj) or not _on(old, removed_nodes)
        elif not _same_allocation(old, obj):
            if _allocated(old):
                released.append(old)
            if _allocated(obj):
                taken.append(obj)
        if isinstance(obj, Pod) or isinstance(old, Pod):
            pods.append((old if isinstance(old, Pod) else None,
                         obj if isinstance(obj, Pod) else None))
        if isinstance(old, OpaqueObject):
            _forget_vendor(state, old)
        state.add(obj, index=False)  # a replaced key keeps its place in the dict
    if reindex and not unexplained and _nodes_removable(state, removed_nodes):
        _remove_nodes(state, removed_nodes)
        if not _retake(state, released, taken):
            return False
        for old, new in pods:
            if old is not None and _charged(state, old):
                state.charge(old, old.node_name, -1)
            if new is not None and _charged(state, new):
                state.charge(new, new.node_name, +1)
    elif reindex:
        problems = len(state.problems)
        state.reindex(record=True)
        if len(state.problems) > problems:
            return False
    else:
        if not _retake(state, released, taken):
            return False
        for old, new in pods:
            if old is not None and _charged(state, old):
                state.charge(old, old.node_name, -1)
            if new is not None and _charged(state, new):
                state.charge(new, new.node_name, +1)
        if not only_new_pods:
            # what nodes refused before may fit now; new pods only take (a full pass places
            # them within one epoch too), so the scans' cursors stay (scheduling/cache.py)
            state.epoch += 1
    return all(not p.node_name or p.node_name in state.nodes
               for _old, p in pods if p is not None)


def _published(obj: KObject) -> bool:
    """Whether ``obj`` is what nodes publish (the node order and inventories)."""
    return isinstance(obj, _INDEXED)


def _allocated(obj: KObject | None) -> bool:
    return isinstance(obj, ResourceClaim) and obj.allocation is not None


def _retake(state: ClusterState, released: list[ResourceClaim],
            taken: list[ResourceClaim]) -> bool:
    """Give back what the ``released`` claims' old versions hold, then take what the
    ``taken`` ones name, as a rebuild takes every allocated claim (each in the state's own
    inventory: a fork's are shared until changed).

    Returns:
        False when a rebuild would report a problem (a device taken twice, a node that
        publishes no such device): the caller rebuilds, and the rebuild reports it.
    """
    for claim in released:
        for inventory, candidate in claim.allocation.picks:
            own = state.inventory_for(inventory)
            if own is not None:
                own.release(candidate, claim.ref)
    problems = len(state.problems)
    for claim in taken:
        claim.allocation.picks = []
        take_result(state, claim, record=True)
    return len(state.problems) == problems


def _on(obj: KObject, nodes: set[str]) -> bool:
    """Whether ``obj`` (an indexed object) is one of ``nodes``, published for one of them,
    or a seed claim holding devices of them alone."""
    if isinstance(obj, Node):
        return obj.name in nodes
    if isinstance(obj, ResourceClaim):
        allocation = obj.allocation
        return (allocation is not None and allocation.node_name in nodes
                and all(inventory.node_name in nodes for inventory, _ in allocation.picks))
    return obj.node_name in nodes


def _nodes_removable(state: ClusterState, nodes: set[str]) -> bool:
    """Whether ``nodes`` can leave ``state`` without a rebuild: they exist, and nothing left
    in it is published for them or holds their devices (a rebuild would index or refuse
    it)."""
    if not nodes or not nodes <= state.nodes.keys():
        return False
    if any(obj.node_name in nodes
           for obj in state.of_kind(NodeResourceSlice | NodeResourceCapacity)):
        return False
    return not any(c.allocation is not None and _holds_on(c.allocation, nodes)
                   for c in state.claims())


def _holds_on(allocation, nodes: set[str]) -> bool:
    return allocation.node_name in nodes or any(
        inventory.node_name in nodes for inventory, _ in allocation.picks)


def _remove_nodes(state: ClusterState, nodes: set[str]) -> None:
    """Take ``nodes`` out of the node order, inventories and usage, as a rebuild without
    them would index the others: every other inventory and what it holds is kept."""
    for name in nodes:
        del state.nodes[name]
        for inventory in state.inventories.pop(name, ()):
            state.inventory_index.pop((name, inventory.driver_name, inventory.model.name),
                                      None)
        state.usage.pop(name, None)
    state.node_order = [n for n in state.node_order if n not in nodes]
    state.epoch += 1


def _same_allocation(old: KObject | None, new: KObject) -> bool:
    """Whether ``new`` replaces an allocated seed claim holding the very same devices (its
    reservations changed, say); it then takes over what ``old`` holds, as a rebuild would
    take it again, without rebuilding every inventory."""
    if not (isinstance(old, ResourceClaim) and isinstance(new, ResourceClaim)
            and old.allocation is not None and new.allocation is not None
            and old.allocation.handles == new.allocation.handles):
        return False
    new.allocation.picks = list(old.allocation.picks)
    return True


def _charged(state: ClusterState, pod: Pod) -> bool:
    return bool(pod.node_name) and not pod.terminated and pod.node_name in state.usage


def _drop(state: ClusterState, obj: KObject) -> None:
    state.remove(obj)
    if isinstance(obj, OpaqueObject):
        _forget_vendor(state, obj)


def _forget_vendor(state: ClusterState, obj: OpaqueObject) -> None:
    for key in [k for k, v in state.vendor.items() if v is obj]:
        del state.vendor[key]
