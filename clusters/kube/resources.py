"""Which kinds the planner reads from a cluster, in which order, at which paths.

The order is the stored cluster's document order on a first import (the engine schedules
pods in document order): namespaces and nodes, then classes and slices, templates, claims,
pods, and ProvisioningRequests last. The DRA kinds and ProvisioningRequests are read at the
newest version the cluster serves among those the engine reads (``allocation.engine.kinds``),
chosen by discovery (``clusters.kube.discovery``).
"""

from __future__ import annotations

from dataclasses import dataclass

from allocation.engine import kinds

__all__ = ["Resource", "RESOURCES", "by_kind"]


@dataclass(frozen=True, slots=True)
class Resource:
    """One kind as the API server serves it: its spec, its plural, and the version read."""

    spec: kinds.KindSpec
    plural: str
    version: str = ""
    """The version to read; empty until discovery chose one (core kinds: always v1)."""

    @property
    def kind(self) -> str:
        return self.spec.name

    @property
    def group(self) -> str:
        return self.spec.group

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def candidates(self) -> tuple[str, ...]:
        """The versions the engine reads, newest first (v1, else v1beta2, else v1beta1)."""
        return tuple(reversed(self.spec.versions))

    @property
    def path(self) -> str:
        """The collection across every namespace."""
        if not self.group:
            return f"/api/{self.version}/{self.plural}"
        return f"/apis/{self.group}/{self.version}/{self.plural}"

    @property
    def name(self) -> str:
        """``resourceclaims.resource.k8s.io``: the name RBAC rules and messages use."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


RESOURCES: tuple[Resource, ...] = (
    Resource(kinds.NAMESPACE, "namespaces", "v1"),
    Resource(kinds.NODE, "nodes", "v1"),
    Resource(kinds.DEVICE_CLASS, "deviceclasses"),
    Resource(kinds.RESOURCE_SLICE, "resourceslices"),
    Resource(kinds.POD_TEMPLATE, "podtemplates", "v1"),
    Resource(kinds.RESOURCE_CLAIM_TEMPLATE_V1, "resourceclaimtemplates"),
    Resource(kinds.RESOURCE_CLAIM_V1, "resourceclaims"),
    Resource(kinds.POD, "pods", "v1"),
    Resource(kinds.PROVISIONING_REQUEST, "provisioningrequests"),
)
"""Every kind read from a cluster, in import order (docs/live-cluster.md)."""

OPTIONAL_KINDS = frozenset({kinds.PROVISIONING_REQUEST.name})
"""Kinds whose API (a CRD) a cluster may not serve at all; skipped when it does not."""


def by_kind(kind: str) -> Resource:
    """The resource of ``kind`` (before discovery).

    Raises:
        KeyError: the planner does not read that kind from clusters.
    """
    for resource in RESOURCES:
        if resource.kind == kind:
            return resource
    raise KeyError(kind)
