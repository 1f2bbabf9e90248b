"""The state of one cluster: its objects, indexes over them, and what devices are held.

A :class:`ClusterState` is built from loaded manifests. Building also checks the input's
status: every allocated device must exist, and no device may be held by two claims that
cannot share it. Controllers then change the state in place.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from allocation.engine.events import EventRecorder, VirtualClock
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
    stable_uid,
)

__all__ = ["ClusterState"]


class ClusterState:
    """Objects of one cluster plus the engine's indexes; controllers mutate it in place."""

    def __init__(self, clock: VirtualClock | None = None) -> None:
        self.objects: dict[ObjectKey, KObject] = {}
        self.vendor: dict[tuple[str, str, str | None, str], OpaqueObject] = {}
        self.nodes: dict[str, Node] = {}
        self.node_order: list[str] = []
        self.inventories: dict[str, list[Inventory]] = defaultdict(list)
        self.inventory_index: dict[tuple[str, str, str], Inventory] = {}
        self.usage: dict[str, list[int]] = {}
        self.epoch = 0
        self.clock = clock or VirtualClock()
        self.events = EventRecorder(self.clock)
        self.problems: list[Problem] = []

    # -- building ---------------------------------------------------------------------
    @classmethod
    def build(cls, loaded: LoadResult, clock: VirtualClock | None = None) -> ClusterState:
        """A state from loaded manifests; raises InvalidManifests if the status is invalid."""
        state = cls(clock)
        state.events.adopt(loaded.events)
        for obj in loaded.objects:
            state.add(obj, index=False)
        state.reindex(record=True)
        state._claim_input_allocations()
        if state.problems:
            raise InvalidManifests(state.problems)
        return state

    def add(self, obj: KObject, index: bool = True) -> None:
        """Add an object (input or generated); ``index`` refreshes node indexes if needed."""
        if isinstance(obj, OpaqueObject):
            self.vendor[(obj.api_group, obj.kind_name, obj.namespace, obj.name)] = obj
            if not (obj.raw.get("metadata") or {}).get("namespace"):
                # The planner cannot know a vendor kind's scope: one written without a
                # namespace is also what a class (cluster-scoped reference) finds.
                self.vendor[(obj.api_group, obj.kind_name, None, obj.name)] = obj
        if isinstance(obj, Pod | ResourceClaim) and not obj.meta.uid:
            obj.meta.uid = stable_uid(obj.kind, obj.namespace, obj.name)
        self.objects[obj.key] = obj
        if index and isinstance(obj, Node | NodeResourceSlice | NodeResourceCapacity):
            self.reindex()

    def remove(self, obj: KObject) -> None:
        self.objects.pop(obj.key, None)

    def reindex(self, record: bool = False) -> None:
        """Rebuild node order, inventories and usage (after nodes or slices change)."""
        held = [(c, c.allocation) for c in self.claims() if c.allocation is not None]
        self.nodes = {o.name: o for o in self.of_kind(Node)}
        self.node_order = sorted(self.nodes)
        self.inventories = defaultdict(list)
        self.inventory_index = {}
        grouped: dict[tuple[str, str, str], list] = defaultdict(list)
        for piece in self.of_kind(NodeResourceSlice):
            grouped[(piece.node_name, piece.driver_name, piece.model_name)].append(
                piece.model_value)
        capacities: dict[tuple[str, str], list] = defaultdict(list)
        for capacity in self.of_kind(NodeResourceCapacity):
            capacities[(capacity.node_name, capacity.driver_name)].append(capacity.instances)
        for model in registry.all_models():
            if model.source == "capacity":
                for (node, driver), instances in capacities.items():
                    grouped[(node, driver, model.name)].append(instances)
        for (node, driver, model_name), published in sorted(grouped.items()):
            model = registry.get(model_name)
            if model is None:
                continue
            inventory = model.build_inventory(node, driver, published)
            self.inventories[node].append(inventory)
            self.inventory_index[(node, driver, model_name)] = inventory
        for claim, allocation in held:  # re-take what allocated claims hold
            allocation.picks = []
            self._take_result(claim, record=record)
        self.usage = {name: [0, 0, 0] for name in self.nodes}
        for pod in self.pods():
            if pod.node_name and not pod.terminated and pod.node_name in self.usage:
                self.charge(pod, pod.node_name, +1)
        self.epoch += 1

    def _problem(self, obj: KObject, path: str, message: str) -> None:
        source = obj.source
        self.problems.append(Problem(source.file if source else "<generated>",
                                     source.doc if source else 0, obj.kind_name, obj.namespace,
                                     obj.name, path, message))

    def _take_result(self, claim: ResourceClaim, record: bool = True) -> None:
        assert claim.allocation is not None
        for h_index, handle in enumerate(claim.allocation.handles):
            data = handle.get("structuredData")
            if not data:
                continue
            path = f"status.allocation.resourceHandles[{h_index}].structuredData"
            node, driver = data.get("nodeName"), handle.get("driverName")
            for model in registry.all_models():
                if data.get(model.name) is None:
                    continue
                inventory = self.inventory_index.get((node, driver, model.name))
                if inventory is None:
                    if record:
                        self._problem(claim, path, f"node {node!r} publishes no "
                                      f"{model.name} resources of driver {driver!r}")
                    continue
                for i_index, item in enumerate(model.result_items(data[model.name])):
                    candidate = inventory.resolve(item)
                    item_path = f"{path}.{model.name}[{i_index}]"
                    if isinstance(candidate, str):
                        if record:
                            self._problem(claim, item_path, candidate)
                        continue
                    try:
                        inventory.take(candidate, claim.ref)
                    except ValueError as exc:
                        if record:
                            self._problem(claim, item_path, f"{exc}; a device may not be "
                                          f"allocated to claim {claim.ref} as well")
                        continue
                    claim.allocation.picks.append((inventory, candidate))

    def _claim_input_allocations(self) -> None:
        for pod in self.pods():
            if pod.node_name and pod.node_name not in self.nodes:
                self._problem(pod, "spec.nodeName", f"node {pod.node_name!r} not found")
        for claim in self.claims():
            if len(claim.reserved_for) > 1 and not (claim.allocation and
                                                    claim.allocation.shareable):
                self._problem(claim, "status.reservedFor", "a claim that is not shareable "
                              f"may be reserved for one pod, found {len(claim.reserved_for)}")
            if claim.reserved_for and claim.allocation is None:
                self._problem(claim, "status.reservedFor", "a claim must be allocated before "
                              "it is reserved")

    # -- queries ----------------------------------------------------------------------
    def of_kind(self, cls: type) -> Iterator:
        return (o for o in list(self.objects.values()) if isinstance(o, cls))

    def pods(self) -> Iterator[Pod]:
        return self.of_kind(Pod)

    def claims(self) -> Iterator[ResourceClaim]:
        return self.of_kind(ResourceClaim)

    def get(self, kind: str, namespace: str | None, name: str) -> KObject | None:
        return self.objects.get(ObjectKey(kind, namespace, name))

    def vendor_object(self, api_group: str, kind: str, namespace: str | None,
                      name: str) -> OpaqueObject | None:
        return self.vendor.get((api_group, kind, namespace, name)) or self.vendor.get(
            (api_group, kind, None, name))

    def charge(self, pod: Pod, node_name: str, sign: int) -> None:
        usage = self.usage.setdefault(node_name, [0, 0, 0])
        usage[0] += sign * pod.cpu_milli
        usage[1] += sign * pod.memory
        usage[2] += sign
        if sign < 0:
            self.epoch += 1

    def all_objects(self) -> list[KObject]:
        return list(self.objects.values())
