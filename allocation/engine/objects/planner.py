"""Autoscaling and planner kinds: ProvisioningRequest, NodeGroup, DriverSimulation."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from allocation.engine import kinds
from allocation.engine.objects.meta import KObject, json_copy
from allocation.engine.objects.provisioning import ATOMIC, CHECK_CAPACITY

__all__ = ["ProvisioningRequest", "NodeGroup", "DriverSimulation", "is_v1_slice_spec",
           "v1_node_slices", "V1_NODE_FIELDS"]

V1_NODE_FIELDS = ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")
"""A v1 slice's node fields: a node group's slice specs set none (``nodeName`` is the new
node's)."""


CLASS_ALIASES = {
    "check-capacity.kubernetes.io": CHECK_CAPACITY,
    "atomic-scale-up.kubernetes.io": ATOMIC,
}
"""The seeds' provisioning class names and the upstream names they stand for."""


class ProvisioningRequest(KObject):
    kind_spec = kinds.PROVISIONING_REQUEST

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        spec = raw["spec"]
        self.pod_sets: list[dict] = list(spec.get("podSets") or ())
        self.class_name: str = spec.get("provisioningClassName") or spec.get(
            "provisioningClass") or ""
        self.parameters: dict[str, str] = dict(spec.get("parameters") or spec.get(
            "Parameters") or {})
        status = raw.get("status") or {}
        self.conditions: list[dict] = [dict(c) for c in status.get("conditions") or ()]
        self.statuses: dict[str, str] = dict(status.get("statuses") or {})

    @property
    def canonical_class(self) -> str:
        return CLASS_ALIASES.get(self.class_name, self.class_name)

    def status_manifest(self, copy_value: Callable[[Any], Any] = json_copy) -> Any:
        status = dict(copy_value(self.raw.get("status") or {}))
        if self.conditions:
            status["conditions"] = copy_value(self.conditions)
        if self.statuses:
            status["statuses"] = dict(self.statuses)
        return status


class NodeGroup(KObject):
    kind_spec = kinds.NODE_GROUP

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        spec = raw["spec"]
        self.min_size: int = int(spec.get("minSize") or 0)
        self.max_size: int = int(spec["maxSize"])
        self.template: dict = spec.get("template") or {}
        self.capacity_from_node: str | None = spec.get("capacityFromNode")
        entries = list(spec.get("resourceSlices") or ())
        self.resource_slices: list[dict] = [e for e in entries if not is_v1_slice_spec(e)]
        """The seed slice specs (``driverName`` and a model)."""
        self.v1_resource_slices: list[dict] = [e for e in entries if is_v1_slice_spec(e)]
        """The resource.k8s.io/v1 ResourceSlice specs, without ``nodeName`` and
        ``pool.name`` (:func:`v1_node_slices` fills them in)."""
        self.resource_capacities: list[dict] = list(spec.get("resourceCapacities") or ())
        status = raw.get("status") or {}
        self.nodes: list[str] = list(status.get("nodes") or ())

    def status_manifest(self, copy_value: Callable[[Any], Any] = json_copy) -> Any:
        return {"size": len(self.nodes), "nodes": list(self.nodes)} if self.nodes else {}


class DriverSimulation(KObject):
    kind_spec = kinds.DRIVER_SIMULATION

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        spec = raw["spec"]
        self.controller_name: str = spec["controllerName"]
        self.pools: list[dict] = list(spec.get("pools") or ())
        self.request_count: str | None = spec.get("requestCount")
        self.handle_data: str | None = spec.get("handleData")


def is_v1_slice_spec(entry: object) -> bool:
    """Whether an entry of a NodeGroup's ``spec.resourceSlices`` is a resource.k8s.io/v1
    ResourceSlice spec (v1's ``driver``) rather than a seed one (``driverName``)."""
    return isinstance(entry, dict) and "driver" in entry and "driverName" not in entry


def _pool_name(pool: str | None, source: str | None, node: str) -> str:
    """The new node's name for a pool: a node group's own specs name none (the pool is the
    node's); a pool copied from ``source`` is renamed after the new node."""
    if not pool or pool == source:
        return node
    if source and source in pool:
        return pool.replace(source, node)
    return f"{node}/{pool}"


def v1_node_slices(specs: list[dict], node: str, source: str | None = None) -> list[dict]:
    """The ResourceSlice documents node ``node`` publishes for v1 slice ``specs`` of its
    node group (docs/autoscaling.md, "Node groups"): ``nodeName`` is ``node``; the pool is
    named after ``node`` (a pool copied from node ``source`` keeps what follows its
    name) with ``resourceSliceCount`` the number of ``specs`` in it; the slice names are
    ``<node>-<driver>-<i>``, ``i`` counting each driver's slices, so each new node's
    slices sort as the specs do.

    Returns:
        New documents, one per spec in order; ``specs`` are not changed.
    """
    docs = []
    for spec in specs:
        body = {k: copy.deepcopy(v) for k, v in spec.items() if k not in V1_NODE_FIELDS}
        pool = dict(body.get("pool") or {})
        pool["name"] = _pool_name(pool.get("name"), source, node)
        pool.setdefault("generation", 0)
        body["pool"] = pool
        body["nodeName"] = node
        docs.append({"apiVersion": kinds.RESOURCE_SLICE.preferred_version,
                     "kind": "ResourceSlice", "metadata": {}, "spec": body})
    per_pool: dict[tuple, int] = {}
    per_driver: dict[str, int] = {}
    for doc in docs:
        key = (doc["spec"]["driver"], doc["spec"]["pool"]["name"])
        per_pool[key] = per_pool.get(key, 0) + 1
        per_driver[doc["spec"]["driver"]] = per_driver.get(doc["spec"]["driver"], 0) + 1
    seen: dict[str, int] = {}
    for doc in docs:
        spec = doc["spec"]
        driver = spec["driver"]
        spec["pool"]["resourceSliceCount"] = per_pool[(driver, spec["pool"]["name"])]
        index = seen.get(driver, 0)
        seen[driver] = index + 1
        width = len(str(per_driver[driver] - 1))
        doc["metadata"]["name"] = f"{node}-{driver}-{index:0{width}d}"
    return docs
