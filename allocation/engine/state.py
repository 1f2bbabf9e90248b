"""The state of one cluster: its objects, indexes over them, and what devices are held.

A :class:`ClusterState` is built from loaded manifests. Building also checks the input's
status: every allocated device must exist, and no device may be held by two claims that
cannot share it. Controllers then change the state in place.

:meth:`ClusterState.fork` makes a copy-on-write snapshot for what-if work (the autoscaler,
scenarios): parent and fork share every object and inventory until one of them changes it.
Code that changes an object calls :meth:`ClusterState.writable` first and changes what it
returns; inventories are copied when looked up through ``inventory_index`` (see
``docs/autoscaling.md``).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from allocation.engine import kinds, v1_pools
from allocation.engine.events import EventRecorder, VirtualClock
from allocation.engine.input_status import check_input, take_result
from allocation.engine.inventory_cache import built_inventory
from allocation.engine.inventory_index import InventoryIndex
from allocation.engine.manifests import InvalidManifests, LoadResult, Problem
from allocation.engine.models import Inventory, registry
from allocation.engine.objects import (
    KObject,
    Node,
    NodeResourceCapacity,
    NodeResourceSlice,
    ObjectKey,
    OpaqueObject,
    Pod,
    ResourceClaim,
    ResourceSlice,
    stable_uid,
    unique_derived_uids,
)
from allocation.engine.objects.clone import clone

if TYPE_CHECKING:
    from allocation.engine.v1.features import Profile
    from allocation.engine.v1_pools import KeptIndex

__all__ = ["ClusterState", "NodeInUse", "Usage"]


class Usage(NamedTuple):
    """What the pods bound to one node request in total."""

    cpu_milli: int = 0
    memory: int = 0
    pods: int = 0
    other: Mapping[str, int] = MappingProxyType({})
    """The rest (``Pod.other_requests``: ephemeral-storage, hugepages-*, extended
    resources); a new mapping on every change, never changed in place."""

_T = TypeVar("_T", bound=KObject)

# the classes ``add`` asks about per object, as tuples made once (a union written in the
# call is built again at every call, and every claim made from a template is added)
_GIVEN_UID = (Pod, ResourceClaim)  # given a stable uid when they have none
_INDEXED = (Node, NodeResourceSlice, NodeResourceCapacity)  # they change the node indexes


class NodeInUse(ValueError):
    """A node cannot be removed: pods or allocated claims still use it."""


class ClusterState:
    """Objects of one cluster plus the engine's indexes; controllers mutate it in place.

    ``node_order``, the :class:`Usage` tuples in ``usage`` and the lists in ``inventories``
    are replaced, never changed in place, so a fork may share them.
    """

    def __init__(self, clock: VirtualClock | None = None) -> None:
        # inventories carrying this token belong to this state alone (inventory_index.py)
        self.cow_token = object()
        self._owned: set[ObjectKey] | None = None  # None: no fork shares any object
        self.objects: dict[ObjectKey, KObject] = {}
        # each key's place in ``objects`` (a dict keeps insertion order; a replaced key keeps
        # its place, a new one goes last): ``in_order`` sorts a few keys without a walk
        self._positions: dict[ObjectKey, int] = {}
        self._next_position = 0
        # the objects again, per concrete class, in the same (document) order: of_kind
        # reads one class without walking every object (every controller asks every round)
        self._by_class: dict[type, dict[ObjectKey, KObject]] = defaultdict(dict)
        # per class or union asked: (len(_by_class) then, the classes of _by_class it
        # covers). _by_class only gains classes, so its length says when to look again.
        self._covered: dict[type, tuple[int, list[type]]] = {}
        self.vendor: dict[tuple[str, str, str | None, str], OpaqueObject] = {}
        self.nodes: dict[str, Node] = {}
        self.node_order: list[str] = []
        self.inventories: dict[str, list[Inventory]] = defaultdict(list)
        self.inventory_index: dict[tuple[str, str, str], Inventory] = InventoryIndex(self)
        self.usage: dict[str, Usage] = {}
        self.epoch = 0
        self.clock = clock or VirtualClock()
        self.events = EventRecorder(self.clock)
        self.problems: list[Problem] = []
        # Objects a controller failed on (engine/faults.py): every controller skips them.
        self.failures: dict[ObjectKey, object] = {}
        # The Kubernetes profile v1 scheduling uses (docs/v1.md); None: the newest release.
        self.profile: Profile | None = None
        # the v1 allocator's slice index (engine/v1_pools.py), shared with forks
        self.v1_pools: KeptIndex | None = None
        # Keys of the objects handed out by writable() or added since the caller last cleared
        # it: the others are as they were loaded, so the worker need not write them again
        # (docs/console.md, "The worker").
        self.changed: set[ObjectKey] = set()
        # Every key as it is handed out, added or removed, repeats included, in order:
        # what has changed since a given point (engine/quiet.py reads it from there).
        self.touched: list[ObjectKey] = []

    # -- copy-on-write ----------------------------------------------------------------
    def fork(self) -> ClusterState:
        """A snapshot that can change without changing this state, and vice versa.

        Nothing is deep-copied: the fork gets shallow copies of the indexes (pointer copies,
        a few milliseconds for thousands of nodes) and shares every object and inventory.
        From now on both states copy an object or inventory the first time they change it.
        The fork has its own clock (at the same time) and its own Event list.
        """
        child = ClusterState.__new__(ClusterState)
        child.cow_token = object()
        child._owned = set()
        child.objects = dict(self.objects)
        child._positions = dict(self._positions)
        child._next_position = self._next_position
        child._by_class = defaultdict(dict, {c: dict(d) for c, d in self._by_class.items()})
        child._covered = {}
        child.vendor = dict(self.vendor)
        child.nodes = dict(self.nodes)
        child.node_order = self.node_order
        child.inventories = defaultdict(list, self.inventories)
        child.inventory_index = InventoryIndex(child, self.inventory_index)
        child.usage = dict(self.usage)
        child.epoch = self.epoch
        child.clock = VirtualClock(self.clock.now)
        child.events = EventRecorder(child.clock)
        child.events.items = list(self.events.items)
        child.events._seq = self.events._seq
        child.problems = list(self.problems)
        child.failures = dict(self.failures)
        child.profile = self.profile
        child.v1_pools = self.v1_pools
        child.changed = set()
        child.touched = []
        self.cow_token = object()  # what this state held alone it now shares with the fork
        self._owned = set()
        return child

    def writable(self, obj: _T) -> _T:
        """This state's own version of ``obj``, safe to change (a private copy after a fork).

        Always change what this returns: in a fork (or a state that was forked) ``obj`` may
        be shared. Objects not in the state are returned as they are.
        """
        owned = self._owned
        key = obj.key
        current = self.objects.get(key)
        if current is None:
            return obj
        self.changed.add(key)
        self.touched.append(key)
        if owned is None or key in owned:
            return current  # type: ignore[return-value]
        twin = clone(current)
        self.objects[key] = twin
        self._by_class[type(twin)][key] = twin
        owned.add(key)
        if isinstance(twin, Node) and self.nodes.get(twin.name) is current:
            self.nodes[twin.name] = twin
        return twin

    def inventory_for(self, inventory: Inventory) -> Inventory | None:
        """This state's own version of ``inventory`` (by node, driver and model), if any."""
        return self.inventory_index.get((inventory.node_name, inventory.driver_name,
                                         inventory.model.name))

    # -- building ---------------------------------------------------------------------
    @classmethod
    def build(cls, loaded: LoadResult, clock: VirtualClock | None = None) -> ClusterState:
        """A state from loaded manifests; raises InvalidManifests if the status is invalid."""
        state = cls(clock)
        state.profile = loaded.profile
        state.events.adopt(loaded.events)
        derived: list[KObject] = []
        for obj in loaded.objects:
            state.add(obj, index=False, derived=derived)
        if derived:
            unique_derived_uids(loaded.objects, derived)
        state.reindex(record=True)
        check_input(state)
        if state.problems:
            raise InvalidManifests(state.problems)
        v1_pools.warm(state)
        return state

    def add(self, obj: KObject, index: bool = True, derived: list | None = None) -> None:
        """Add an object (input or generated); ``index`` refreshes node indexes if needed;
        ``derived`` collects it when its uid is made here (``stable_uid``)."""
        if isinstance(obj, OpaqueObject):
            self.vendor[(obj.api_group, obj.kind_name, obj.namespace, obj.name)] = obj
            if not (obj.raw.get("metadata") or {}).get("namespace"):
                # The planner cannot know a vendor kind's scope: one written without a
                # namespace is also what a class (cluster-scoped reference) finds.
                self.vendor[(obj.api_group, obj.kind_name, None, obj.name)] = obj
        # the uid first: an object made with one (every v1 claim made from a template)
        # asks no kind question (``KindSpec.__hash__`` is a Python call)
        if not obj.meta.uid and (isinstance(obj, _GIVEN_UID)
                                 or obj.kind_spec in kinds.V1_KIND_SET):
            obj.meta.uid = stable_uid(obj.kind, obj.namespace, obj.name)
            if derived is not None:
                derived.append(obj)
        key = obj.key
        current = self.objects.get(key)
        if current is None:
            self._positions[key] = self._next_position
            self._next_position += 1
        elif type(current) is not type(obj):
            self._by_class[type(current)].pop(key, None)
        self.objects[key] = obj
        self._by_class[type(obj)][key] = obj
        self.changed.add(key)
        self.touched.append(key)
        if self._owned is not None:
            self._owned.add(key)
        if index and isinstance(obj, _INDEXED):
            self.reindex()

    def remove(self, obj: KObject) -> None:
        """Remove ``obj``; its key stays in ``changed`` (a key there without an object is
        one removed)."""
        current = self.objects.pop(obj.key, None)
        if current is not None:
            self._by_class[type(current)].pop(obj.key, None)
            del self._positions[obj.key]
        self.changed.add(obj.key)
        self.touched.append(obj.key)

    def _index(self, slices: Iterable[NodeResourceSlice],
               capacities: Iterable[NodeResourceCapacity]) -> None:
        """Build and register the inventories that ``slices`` and ``capacities`` publish."""
        grouped: dict[tuple[str, str, str], list] = defaultdict(list)
        for piece in slices:
            grouped[(piece.node_name, piece.driver_name, piece.model_name)].append(
                piece.model_value)
        by_driver: dict[tuple[str, str], list] = defaultdict(list)
        for capacity in capacities:
            by_driver[(capacity.node_name, capacity.driver_name)].append(capacity.instances)
        for model in registry.all_models():
            if model.source == "capacity":
                for (node, driver), instances in by_driver.items():
                    grouped[(node, driver, model.name)].append(instances)
        for (node, driver, model_name), published in sorted(grouped.items()):
            model = registry.get(model_name)
            if model is None:
                continue
            self.inventory_index.register(
                (node, driver, model_name), built_inventory(model, node, driver, published))

    def reindex(self, record: bool = False) -> None:
        """Rebuild node order, inventories and usage (after nodes or slices change)."""
        held = [self.writable(c) for c in list(self.claims()) if c.allocation is not None]
        self.nodes = {o.name: o for o in self.of_kind(Node)}
        self.node_order = sorted(self.nodes)
        self.inventories = defaultdict(list)
        self.inventory_index = InventoryIndex(self)
        self._index(self.of_kind(NodeResourceSlice), self.of_kind(NodeResourceCapacity))
        for claim in held:  # re-take what allocated claims hold
            claim.allocation.picks = []
            take_result(self, claim, record=record)
        self.usage = {name: Usage() for name in self.nodes}
        for pod in self.pods():
            if pod.node_name and not pod.terminated and pod.node_name in self.usage:
                self.charge(pod, pod.node_name, +1)
        self.epoch += 1

    def add_node(self, node: Node, slices: Iterable[NodeResourceSlice | ResourceSlice] = (),
                 capacities: Iterable[NodeResourceCapacity] = ()) -> None:
        """Add a node with the slices (seed or resource.k8s.io/v1, which the v1 allocator
        reads from the objects) and capacities it publishes, indexing only that node.

        Raises ValueError (nothing added) if the node exists or a slice names another node.
        """
        slices, capacities = list(slices), list(capacities)
        if node.name in self.nodes:
            raise ValueError(f"node {node.name!r} exists already")
        for piece in (*slices, *capacities):
            if piece.node_name != node.name:
                raise ValueError(f"{piece.kind_name} {piece.name!r} is for node "
                                 f"{piece.node_name!r}, not {node.name!r}")
        for piece in (node, *slices, *capacities):
            self.add(piece, index=False)
        self.nodes[node.name] = node
        order = list(self.node_order)
        bisect.insort(order, node.name)
        self.node_order = order
        self._index([s for s in slices if isinstance(s, NodeResourceSlice)], capacities)
        self.usage[node.name] = Usage()
        self.epoch += 1  # new capacity: cached "nothing fits" answers are stale

    def remove_node(self, name: str) -> None:
        """Remove a node, its slices, capacities and inventories.

        Raises :class:`NodeInUse` (nothing removed) while a pod is bound to it or a claim is
        allocated there; evict those pods first.
        """
        if name not in self.nodes:
            raise ValueError(f"node {name!r} not found")
        pods = sorted(p.ref for p in self.pods() if p.node_name == name and not p.terminated)
        claims = sorted(c.ref for c in self.claims()
                        if c.allocation is not None and c.allocation.node_name == name)
        if pods or claims:
            users = [f"pod(s) {', '.join(pods)}"] if pods else []
            users += [f"allocated claim(s) {', '.join(claims)}"] if claims else []
            raise NodeInUse(f"node {name} is in use by {' and '.join(users)}; evict them first")
        for obj in list(self.of_kind(NodeResourceSlice | NodeResourceCapacity
                                     | ResourceSlice)):
            if obj.node_name == name:
                self.remove(obj)
        self.remove(self.nodes[name])
        del self.nodes[name]
        self.node_order = [n for n in self.node_order if n != name]
        for inventory in self.inventories.pop(name, ()):
            self.inventory_index.pop((name, inventory.driver_name, inventory.model.name), None)
        self.usage.pop(name, None)
        self.epoch += 1

    # -- queries ----------------------------------------------------------------------
    def of_kind(self, cls: type) -> Iterator:
        """The objects that are instances of ``cls`` (a class or a union), in document
        order; a snapshot, so the caller may change the state while iterating."""
        by_class = self._by_class
        classes = [c for c in self._classes(cls) if by_class[c]]
        if len(classes) <= 1:
            return iter(list(self._by_class[classes[0]].values()) if classes else ())
        return (o for o in list(self.objects.values()) if isinstance(o, cls))

    def has(self, cls: type) -> bool:
        """Whether any object is an instance of ``cls`` (a class or a union): kept exact by
        ``add``, ``remove`` and ``writable``, so a controller asks it per object to pass
        over work only the other DRA dialect's objects can need (docs/v1.md)."""
        by_class = self._by_class
        for found in self._classes(cls):  # noqa: SIM110 - no generator made: asked per object
            if by_class[found]:
                return True
        return False

    def _classes(self, cls: type) -> list[type]:
        """The classes of ``_by_class`` that are ``cls`` or its subclasses (of a union:
        of one of its members); cached while no class is added."""
        covered = self._covered.get(cls)
        if covered is None or covered[0] != len(self._by_class):
            covered = self._covered[cls] = (len(self._by_class),
                                            [c for c in self._by_class if issubclass(c, cls)])
        return covered[1]

    def pods(self) -> Iterator[Pod]:
        return self.of_kind(Pod)

    def claims(self) -> Iterator[ResourceClaim]:
        return self.of_kind(ResourceClaim)

    def get(self, kind: str, namespace: str | None, name: str) -> KObject | None:
        # a plain tuple finds the ObjectKey entry (a named tuple hashes and compares as its
        # fields) without the named tuple's Python-level constructor: asked per pod and claim
        return self.objects.get((kind, namespace, name))

    def vendor_object(self, api_group: str, kind: str, namespace: str | None,
                      name: str) -> OpaqueObject | None:
        return self.vendor.get((api_group, kind, namespace, name)) or self.vendor.get(
            (api_group, kind, None, name))

    def usage_of(self, node_name: str) -> Usage:
        """What the pods bound to ``node_name`` request (zero for an unknown node)."""
        return self.usage.get(node_name) or Usage()

    def charge(self, pod: Pod, node_name: str, sign: int) -> None:
        used = self.usage_of(node_name)
        other = used.other
        if pod.other_requests:  # most pods have none
            other = dict(other)
            for name, amount in pod.other_requests.items():
                other[name] = other.get(name, 0) + sign * amount
        # A new tuple, not an update in place: a fork may share the old one.
        self.usage[node_name] = Usage(used.cpu_milli + sign * pod.cpu_milli,
                                      used.memory + sign * pod.memory, used.pods + sign,
                                      other)
        if sign < 0:
            self.epoch += 1

    def in_order(self, keys: Iterable[ObjectKey]) -> list[ObjectKey]:
        """The ``keys`` of objects in the state, in document order (``objects``' order),
        sorted by place rather than found by a walk of every object."""
        positions = self._positions
        return sorted((key for key in keys if key in positions), key=positions.__getitem__)

    def all_objects(self) -> list[KObject]:
        return list(self.objects.values())
