"""API discovery: the version of each kind to read, and which optional APIs are served.

One ``GET /apis/<group>`` per API group (the APIGroup document lists the served versions);
the newest version the engine reads wins (v1, else v1beta2, else v1beta1 for the DRA kinds:
docs/live-cluster.md, "Versions"). A group that is not served at all is an error for the
DRA kinds (the cluster has no DRA) and skips ProvisioningRequests (no CRD installed).
"""

from __future__ import annotations

from dataclasses import replace

from clusters.kube.client import Connection, NotServed, SourceError, part_at
from clusters.kube.resources import OPTIONAL_KINDS, RESOURCES, Resource

__all__ = ["discover"]


def discover(connection: Connection) -> list[Resource]:
    """The resources to read, each at the version chosen, in import order.

    Raises:
        SourceError: a required API group is not served in any version the engine reads,
        or discovery itself was refused (AccessDenied names what).
    """
    served: dict[str, set[str]] = {}
    found: list[Resource] = []
    for resource in RESOURCES:
        if resource.version:
            found.append(resource)
            continue
        if resource.group not in served:
            served[resource.group] = _served_versions(connection, resource.group)
        versions = served[resource.group]
        chosen = next((v for v in resource.candidates if v in versions), None)
        if chosen is None:
            if resource.kind in OPTIONAL_KINDS:
                continue
            offered = ", ".join(sorted(versions)) or "none"
            raise SourceError(f"{resource.name}: the API server serves {resource.group} at "
                              f"{offered}; the planner reads "
                              f"{', '.join(resource.candidates)}")
        found.append(replace(resource, version=chosen))
    return found


def _served_versions(connection: Connection, group: str) -> set[str]:
    try:
        document = connection.get_json(f"/apis/{group}")
    except NotServed:
        return set()
    return {version for v in part_at(document, "versions", f"/apis/{group}", list)
            if isinstance(v, dict) and isinstance(version := v.get("version"), str)}
