"""The ``resource.k8s.io/v1alpha2`` kinds of the seeds, typed for the engine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import Any

from allocation.engine import kinds
from allocation.engine.labels import node_selector_matches
from allocation.engine.objects.meta import KObject, json_copy

__all__ = [
    "NodeResourceSlice", "NodeResourceCapacity", "ResourceClass", "ResourceClassParameters",
    "ResourceClaimParameters", "ResourceClaim", "ResourceClaimTemplate",
    "PodSchedulingContext", "Allocation", "node_selector_for", "ClassMode",
]



@lru_cache(maxsize=8192)
def node_selector_for(node_name: str) -> dict:
    """The ``availableOnNodes`` selector of a node-local allocation: one per node, shared
    by the allocations on it (made per claim allocated, it was 2-3% of a settle), the v1
    node-local ones too (``v1.results.node_selector``). Nobody changes it:
    ``Allocation.to_manifest`` and ``ResourceClaimV1.status_manifest`` copy it, or hand it
    to a caller that only reads (the writer), as they do a selector read from an input
    document, which an allocation shares with its document."""
    return {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


class NodeResourceSlice(KObject):
    kind_spec = kinds.NODE_RESOURCE_SLICE

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        spec = raw["spec"]
        self.node_name: str = spec["nodeName"]
        self.driver_name: str = spec["driverName"]
        self.model_name, self.model_value = next(
            (k, v) for k, v in spec.items() if k not in ("nodeName", "driverName")
            and v is not None)


class NodeResourceCapacity(KObject):
    kind_spec = kinds.NODE_RESOURCE_CAPACITY

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        self.node_name: str = raw["nodeName"]
        self.driver_name: str = raw["driverName"]
        self.instances: list[dict] = list(raw.get("instances") or ())


class ClassMode(StrEnum):
    """How a class's claims are allocated: by a control-plane driver (KEP-3063), from
    ``numericParameters`` templates, or from structured parameters (KEP-4381)."""

    CONTROLLER = "controller"
    NUMERIC = "numeric"
    STRUCTURED = "structured"


class ResourceClass(KObject):
    kind_spec = kinds.RESOURCE_CLASS

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        self.driver_name: str = raw["driverName"]
        self.parameters_ref: dict | None = raw.get("parametersRef")
        self.suitable_nodes: dict | None = raw.get("suitableNodes")
        self.numeric_parameters: list[dict] = list(raw.get("numericParameters") or ())
        self.controller_name: str | None = raw.get("controllerName") or None
        if self.controller_name:
            self.mode = ClassMode.CONTROLLER
        elif self.numeric_parameters:
            self.mode = ClassMode.NUMERIC
        else:
            self.mode = ClassMode.STRUCTURED


class ResourceClassParameters(KObject):
    kind_spec = kinds.RESOURCE_CLASS_PARAMETERS

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        self.generated_from: dict | None = raw.get("generatedFrom")
        self.vendor_parameters: Any = raw.get("vendorParameters")
        self.filters: list[dict] = list(raw.get("filters") or ())


class ResourceClaimParameters(KObject):
    kind_spec = kinds.RESOURCE_CLAIM_PARAMETERS

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        self.generated_from: dict | None = raw.get("generatedFrom")
        self.shareable = bool(raw.get("shareable"))
        self.vendor_parameters: Any = raw.get("vendorParameters")
        self.requests: list[dict] = list(raw.get("requests") or ())


@dataclass(slots=True)
class Allocation:
    """A claim's ``status.allocation`` plus what the engine holds for it."""

    handles: list[dict]
    shareable: bool = False
    node_name: str | None = None
    available_on_nodes: dict | None = None
    picks: list = field(default_factory=list)  # (Inventory, Candidate) pairs held

    def usable_on(self, node) -> bool:
        """Whether the allocation serves ``node``: its node, or ``availableOnNodes``."""
        if self.node_name is not None:
            return self.node_name == node.name
        if self.available_on_nodes is None:
            return True
        return node_selector_matches(self.available_on_nodes, node)

    def to_manifest(self, copy_value: Callable[[Any], Any] = json_copy) -> dict:
        out: dict[str, Any] = {"resourceHandles": copy_value(self.handles)}
        if self.shareable:
            out["shareable"] = True
        if self.available_on_nodes is not None:
            out["availableOnNodes"] = copy_value(self.available_on_nodes)
        return out


class ResourceClaim(KObject):
    kind_spec = kinds.RESOURCE_CLAIM

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        spec = raw["spec"]
        self.class_name: str = spec["resourceClassName"]
        self.parameters_ref: dict | None = spec.get("parametersRef")
        self.allocation_mode: str = spec.get("allocationMode") or "WaitForFirstConsumer"
        status = raw.get("status") or {}
        self.driver_name: str | None = status.get("driverName")
        self.controller_name: str | None = status.get("controllerName")
        self.reserved_for: list[dict] = [dict(r) for r in status.get("reservedFor") or ()]
        self.deallocation_requested = bool(status.get("deallocationRequested"))
        self.allocation: Allocation | None = None
        raw_allocation = status.get("allocation")
        if raw_allocation is not None:
            handles = list(raw_allocation.get("resourceHandles") or ())
            node = next((h["structuredData"].get("nodeName") for h in handles
                         if h.get("structuredData")), None)
            self.allocation = Allocation(
                # Shared with the input document: handles are replaced, never changed in
                # place, and to_manifest copies them (copying here cost 40% of a what-if).
                handles=handles, shareable=bool(raw_allocation.get("shareable")),
                node_name=node, available_on_nodes=raw_allocation.get("availableOnNodes"))
        self.pending_reason: str | None = None

    @property
    def immediate(self) -> bool:
        return self.allocation_mode == "Immediate"

    @property
    def owner_pod(self) -> str | None:
        """The name of the pod that owns this claim (claims made from templates)."""
        for ref in self.meta.owner_references:
            if (ref.get("kind") == kinds.POD.name
                    and ref.get("apiVersion", kinds.POD.preferred_version)
                    in kinds.POD.api_versions):
                return ref.get("name")
        return None

    def reserved_pods(self) -> list[str]:
        return [r["name"] for r in self.reserved_for if r.get("resource") == "pods"]

    def spec_changes(self, out: dict) -> None:
        return None

    def status_manifest(self, copy_value: Callable[[Any], Any] = json_copy) -> Any:
        status: dict[str, Any] = {}
        if self.driver_name:
            status["driverName"] = self.driver_name
        if self.controller_name:
            status["controllerName"] = self.controller_name
        if self.allocation is not None:
            status["allocation"] = self.allocation.to_manifest(copy_value)
        if self.reserved_for:
            status["reservedFor"] = copy_value(self.reserved_for)
        if self.deallocation_requested:
            status["deallocationRequested"] = True
        return status


class ResourceClaimTemplate(KObject):
    kind_spec = kinds.RESOURCE_CLAIM_TEMPLATE

    @property
    def claim_spec(self) -> dict:
        return self.raw["spec"]["spec"]

    @property
    def claim_metadata(self) -> dict:
        return self.raw["spec"].get("metadata") or {}


class PodSchedulingContext(KObject):
    kind_spec = kinds.POD_SCHEDULING_CONTEXT

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        spec = raw.get("spec") or {}
        self.selected_node: str | None = spec.get("selectedNode") or None
        self.potential_nodes: list[str] = list(spec.get("potentialNodes") or ())
        status = raw.get("status") or {}
        self.claim_status: dict[str, list[str]] = {
            c["name"]: list(c.get("unsuitableNodes") or ())
            for c in status.get("resourceClaims") or ()}

    def spec_changes(self, out: dict) -> None:
        spec: dict[str, Any] = {}
        if self.selected_node:
            spec["selectedNode"] = self.selected_node
        if self.potential_nodes:
            spec["potentialNodes"] = list(self.potential_nodes)
        out["spec"] = spec

    def status_manifest(self, copy_value: Callable[[Any], Any] = json_copy) -> Any:
        if not self.claim_status:
            return {}
        return {"resourceClaims": [{"name": name, **({"unsuitableNodes": nodes} if nodes
                                                      else {})}
                                   for name, nodes in sorted(self.claim_status.items())]}
