"""Autoscaling and planner kinds: ProvisioningRequest, NodeGroup, DriverSimulation."""

from __future__ import annotations

import copy
from typing import Any

from allocation.engine import kinds
from allocation.engine.objects.meta import KObject
from allocation.engine.objects.provisioning import ATOMIC, CHECK_CAPACITY

__all__ = ["ProvisioningRequest", "NodeGroup", "DriverSimulation"]


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

    def status_manifest(self) -> Any:
        status = copy.deepcopy(self.raw.get("status") or {})
        if self.conditions:
            status["conditions"] = copy.deepcopy(self.conditions)
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
        self.resource_slices: list[dict] = list(spec.get("resourceSlices") or ())
        self.resource_capacities: list[dict] = list(spec.get("resourceCapacities") or ())
        status = raw.get("status") or {}
        self.nodes: list[str] = list(status.get("nodes") or ())

    def status_manifest(self) -> Any:
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
