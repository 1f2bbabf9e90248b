"""Extended resources backed by DRA (KEP-5004, docs/v1.md): which DeviceClass serves an
extended resource on a node, and the requests of the pod's extended-resource claim."""

from __future__ import annotations

__all__ = [
    "IMPLICIT_PREFIX",
    "class_for_extended_resource",
    "extended_resource_requests",
    "extended_resource_route",
    "extended_resource_names",
    "is_extended_resource",
]

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"


def class_for_extended_resource(resource: str, classes: list[dict]) -> dict | None:
    """The DeviceClass mapping ``resource``: the implicit name of a class, else the classes
    whose ``spec.extendedResourceName`` is ``resource``, the newest winning, then the
    smaller name."""
    if resource.startswith(IMPLICIT_PREFIX):
        wanted = resource[len(IMPLICIT_PREFIX):]
        for c in classes:
            if c["metadata"]["name"] == wanted:
                return c
    named = [c for c in classes if (c.get("spec") or {}).get("extendedResourceName") == resource]
    if not named:
        return None
    # RFC 3339 timestamps sort as strings; newest first, then the smaller name
    named.sort(key=lambda c: c["metadata"]["name"])
    named.sort(key=lambda c: c["metadata"].get("creationTimestamp") or "", reverse=True)
    return named[0]


def extended_resource_route(resource: str, node: dict, classes: list[dict]
                            ) -> tuple[str, dict | None]:
    """``("device-plugin", None)`` when the node has allocatable > 0 of ``resource``,
    ``("dra", class)`` when a DeviceClass maps it, else ``("none", None)``: the node does
    not fit."""
    allocatable = ((node.get("status") or {}).get("allocatable") or {}).get(resource)
    if allocatable not in (None, "", "0", 0):
        return ("device-plugin", None)
    cls = class_for_extended_resource(resource, classes)
    return ("dra", cls) if cls is not None else ("none", None)


def is_extended_resource(name: str) -> bool:
    """Whether a container resource name is an extended resource (``domain/name``, not in
    ``kubernetes.io/``, not a quota ``requests.`` name)."""
    if "/" not in name:
        return False
    return not (name.startswith("kubernetes.io/") or name.startswith("requests."))


def extended_resource_names(pod: dict) -> list[str]:
    """The extended resources any container (init or not) of ``pod`` requests, sorted."""
    spec = pod.get("spec") or {}
    names = set()
    # asked for every pod the v1 scheduler tries: "/" rules out cpu, memory and the like
    # before the full test, and a pod without extended resources builds nothing
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or ():
            for n in (container.get("resources") or {}).get("requests") or ():
                if "/" in n and is_extended_resource(n):
                    names.add(n)
    return sorted(names) if names else []


def extended_resource_requests(pod: dict, node: dict, classes: list[dict]) -> list[dict] | None:
    """The requests of the pod's extended-resource claim on ``node`` (sorted as strings),
    ``[]`` when no extended resource goes through DRA, None when one cannot be served."""
    spec = pod.get("spec") or {}
    containers = list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())
    out = []
    for i, container in enumerate(containers):
        requests = ((container.get("resources") or {}).get("requests") or {})
        for j, name in enumerate(sorted(requests)):
            if not is_extended_resource(name):
                continue
            how, cls = extended_resource_route(name, node, classes)
            if how == "none":
                return None
            if how == "dra":
                out.append({"name": f"container-{i}-request-{j}", "exactly": {
                    "deviceClassName": cls["metadata"]["name"],
                    "allocationMode": "ExactCount", "count": int(requests[name])}})
    out.sort(key=lambda r: r["name"])
    return out
