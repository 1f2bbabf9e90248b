"""Core Kubernetes kinds as the planner reads them: Node, Pod, PodTemplate, and others kept."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from allocation.engine import kinds
from allocation.engine.constants import DEFAULT_SCHEDULER
from allocation.engine.objects.meta import KObject, json_copy, top_level_copy
from allocation.engine.objects.requests import milli, pod_requests, whole

__all__ = ["Node", "Pod", "PodTemplate", "PodClaim", "OpaqueObject", "milli", "whole",
           "DEFAULT_MAX_PODS"]

DEFAULT_MAX_PODS = 110  # the kubelet's default when a node does not say
_FIRST_CLASS = frozenset(("cpu", "memory", "pods"))  # a Node's and Usage's own fields


class Node(KObject):
    kind_spec = kinds.NODE

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        spec = raw.get("spec") or {}
        self.unschedulable = bool(spec.get("unschedulable"))
        # kube-scheduler's TaintToleration filter reads them (docs/manifests.md, "Node taints")
        self.taints: list[dict] = spec.get("taints") or []
        allocatable = (raw.get("status") or {}).get("allocatable") or {}
        self.cpu_milli: int | None = milli(allocatable["cpu"]) if "cpu" in allocatable else None
        self.memory: int | None = whole(allocatable["memory"]) if "memory" in allocatable \
            else None
        self.max_pods: int = whole(allocatable["pods"]) if "pods" in allocatable \
            else DEFAULT_MAX_PODS
        # the rest (ephemeral-storage, hugepages-*, extended resources): NodeResourcesFit
        self.other_allocatable: dict[str, int] = {
            k: whole(v) for k, v in allocatable.items() if k not in _FIRST_CLASS} \
            if len(allocatable) > len(_FIRST_CLASS & allocatable.keys()) else {}

    @property
    def labels(self) -> dict[str, str]:
        return self.meta.labels


@dataclass(frozen=True, slots=True)
class PodClaim:
    """One ``spec.resourceClaims`` entry: a claim by name or a claim from a template."""

    name: str
    claim_name: str | None
    template_name: str | None


def _pod_claims(spec: dict) -> list[PodClaim]:
    out = []
    for entry in spec.get("resourceClaims") or ():
        source = entry.get("source") or entry  # the flat 1.31 form has no "source"
        out.append(PodClaim(entry["name"], source.get("resourceClaimName"),
                            source.get("resourceClaimTemplateName")))
    return out


class Pod(KObject):
    kind_spec = kinds.POD

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        spec = raw.get("spec") or {}
        self.node_name: str | None = spec.get("nodeName") or None
        self.node_selector: dict[str, str] = dict(spec.get("nodeSelector") or {})
        self.node_affinity: dict | None = ((spec.get("affinity") or {}).get(
            "nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        self.claims = _pod_claims(spec)
        self.tolerations: list[dict] = spec.get("tolerations") or []
        # kube-scheduler leaves a gated pod, or another scheduler's, alone (scheduling/gates.py)
        self.scheduling_gates: list[dict] = spec.get("schedulingGates") or []
        self.scheduler_name: str = spec.get("schedulerName") or DEFAULT_SCHEDULER
        totals = pod_requests(spec)
        self.cpu_milli: int = totals.pop("cpu", 0)
        self.memory: int = totals.pop("memory", 0)
        # the rest (ephemeral-storage, hugepages-*, extended resources): NodeResourcesFit
        # checks each against the node's allocatable (scheduling/fit.py); most pods have none
        self.other_requests: dict[str, int] = {k: v for k, v in totals.items() if v > 0} \
            if totals else {}
        # whether a container requests a ``domain/name`` resource, the only names an
        # extended resource has (v1_extended.wanted asks it for every pod)
        self.domain_requests = bool(totals) and any("/" in name for name in totals)
        status = raw.get("status") or {}
        self.phase: str | None = status.get("phase")
        self.conditions: list[dict] = [dict(c) for c in status.get("conditions") or ()]
        self.input_node_name = self.node_name
        # Written by the v1 claim controller and scheduler (docs/v1.md, "Template claims")
        self.resource_claim_statuses: list[dict] = [
            dict(c) for c in status.get("resourceClaimStatuses") or ()]
        self.extended_resource_claim_status: dict | None = json_copy(
            status.get("extendedResourceClaimStatus"))
        # The node a pod waiting for DRA binding conditions is reserved on (KEP-5007)
        self.nominated_node_name: str | None = status.get("nominatedNodeName") or None

    def claim_name(self, entry: PodClaim | str) -> str:
        """The name of the ResourceClaim behind one ``spec.resourceClaims`` entry.

        A claim named by the entry keeps its name; a claim from a template is the one
        ``status.resourceClaimStatuses`` records for the entry (upstream's rule, the v1
        claim controller writes it), else ``<pod>-<entry name>`` (the seed claim controller
        creates it, ``docs/architecture.md``). An entry given by name alone (a string) is
        the template form.
        """
        if isinstance(entry, str):
            name = entry
        elif entry.claim_name:
            return entry.claim_name
        else:
            name = entry.name
        if self.resource_claim_statuses:  # asked per pod and controller: most pods have none
            status = self.claim_status(name)
            if status is not None and status.get("resourceClaimName"):
                return status["resourceClaimName"]
        return f"{self.meta.name}-{name}"

    def claim_status(self, entry_name: str) -> dict | None:
        """The ``status.resourceClaimStatuses`` entry for the ``spec.resourceClaims`` entry
        ``entry_name``, if any (the list is keyed by name: validation refuses a repeat)."""
        for status in self.resource_claim_statuses:
            if status.get("name") == entry_name:
                return status
        return None

    def owner_reference(self) -> dict:
        """An ``ownerReferences`` entry naming this pod as the controlling owner, as the
        claim controller and the scheduler write on what they create for it."""
        return {"apiVersion": self.kind_spec.preferred_version, "kind": self.kind,
                "name": self.name, "uid": self.meta.uid, "controller": True,
                "blockOwnerDeletion": True}

    @property
    def terminated(self) -> bool:
        """Succeeded, Failed or being deleted: the pod no longer holds resources."""
        return self.phase in ("Succeeded", "Failed") or self.meta.deletion_timestamp is not None

    def condition(self, type_: str) -> dict | None:
        return next((c for c in self.conditions if c.get("type") == type_), None)

    def set_condition(self, condition: dict) -> bool:
        """Set a condition by type; returns whether anything changed."""
        for index, current in enumerate(self.conditions):
            if current.get("type") == condition["type"]:
                same = all(current.get(k) == v for k, v in condition.items()
                           if k != "lastTransitionTime")
                if same:
                    return False
                if current.get("status") == condition.get("status"):
                    condition = {**condition, "lastTransitionTime":
                                 current.get("lastTransitionTime",
                                             condition.get("lastTransitionTime"))}
                self.conditions[index] = condition
                return True
        self.conditions.append(condition)
        return True

    def spec_changes(self, out: dict) -> None:
        spec = out.setdefault("spec", {})
        if self.node_name:
            spec["nodeName"] = self.node_name
        else:
            spec.pop("nodeName", None)

    def status_manifest(self, copy_value: Callable[[Any], Any] = json_copy) -> Any:
        status = dict(copy_value(self.raw.get("status") or {}))
        if self.conditions:
            status["conditions"] = copy_value(self.conditions)
        else:
            status.pop("conditions", None)
        for key, value in (("nominatedNodeName", self.nominated_node_name),
                           ("resourceClaimStatuses", self.resource_claim_statuses),
                           ("extendedResourceClaimStatus",
                            self.extended_resource_claim_status)):
            if value:
                status[key] = copy_value(value)
            else:
                status.pop(key, None)
        if self.phase:
            status["phase"] = self.phase
        elif not status.get("phase"):
            status["phase"] = "Pending"
        return status


class PodTemplate(KObject):
    kind_spec = kinds.POD_TEMPLATE

    @property
    def template(self) -> dict:
        return self.raw.get("template") or {}


class OpaqueObject(KObject):
    """An object the planner keeps but does not interpret: vendor parameters, Events."""

    def __init__(self, raw: dict, source=None, namespaced: bool = True) -> None:
        self._namespaced = namespaced
        super().__init__(raw, source)

    @property
    def kind_name(self) -> str:
        return self.raw.get("kind", "")

    @property
    def api_group(self) -> str:
        return self.api_version.split("/", 1)[0] if "/" in self.api_version else ""

    def to_manifest(self, shared: bool = False) -> dict:
        return top_level_copy(self.raw) if shared else json_copy(self.raw)
