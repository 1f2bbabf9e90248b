"""Extended resources backed by DRA (KEP-5004, docs/v1.md): which DeviceClass serves an
extended resource on a node, and the requests of the pod's extended-resource claim.

A container's requests are read as the API server leaves them (a resource given only
under ``limits`` is requested at its limit: ``objects.requests.container_requests``); a
request of zero, or of a quantity that is not a whole number, asks for nothing
(``Quantity.AsInt64`` fails or is 0: upstream skips it).
"""

from __future__ import annotations

from allocation.engine.objects.requests import container_requests
from allocation.engine.quantity import Quantity

__all__ = [
    "IMPLICIT_PREFIX",
    "class_for_extended_resource",
    "dra_class",
    "extended_resource_requests",
    "extended_resource_route",
    "extended_resource_names",
    "is_extended_resource",
    "request_count",
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


def dra_class(resource: str, allocatable: int, classes: list[dict]) -> dict | None:
    """The DeviceClass serving ``resource`` through DRA on a node with ``allocatable`` of
    it (0 when the node has none): one maps it and the node has none through a device
    plugin (``shouldDelegateResourceToDRA``), else None."""
    return class_for_extended_resource(resource, classes) if allocatable <= 0 else None


def extended_resource_route(resource: str, node: dict, classes: list[dict]
                            ) -> tuple[str, dict | None]:
    """``("device-plugin", None)`` when the node has allocatable > 0 of ``resource``,
    ``("dra", class)`` when a DeviceClass maps it, else ``("none", None)``: the node does
    not fit."""
    allocatable = ((node.get("status") or {}).get("allocatable") or {}).get(resource)
    if allocatable is not None and Quantity.parse(str(allocatable)).value > 0:
        return ("device-plugin", None)
    cls = dra_class(resource, 0, classes)
    return ("dra", cls) if cls is not None else ("none", None)


def request_count(quantity: object) -> int:
    """The devices a container's request of ``quantity`` asks for: the quantity when it is
    a whole number (``AsInt64``), else 0 (``1k`` is 1000; ``0.5`` asks for nothing)."""
    value = Quantity.parse(str(quantity)).value
    return int(value) if value == int(value) and value > 0 else 0


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
            for n, quantity in container_requests(container).items():
                if "/" in n and is_extended_resource(n) and request_count(quantity):
                    names.add(n)
    return sorted(names) if names else []


def extended_resource_requests(pod: dict, node: dict, classes: list[dict]) -> list[dict] | None:
    """The requests of the pod's extended-resource claim on ``node`` (sorted as strings),
    ``[]`` when no extended resource goes through DRA, None when one cannot be served."""
    spec = pod.get("spec") or {}
    containers = list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())
    out = []
    for i, container in enumerate(containers):
        requests = container_requests(container)
        for j, name in enumerate(sorted(requests)):
            if not is_extended_resource(name):
                continue
            count = request_count(requests[name])
            if not count:
                continue
            how, cls = extended_resource_route(name, node, classes)
            if how == "none":
                return None
            if how == "dra":
                out.append({"name": f"container-{i}-request-{j}", "exactly": {
                    "deviceClassName": cls["metadata"]["name"],
                    "allocationMode": "ExactCount", "count": count}})
    out.sort(key=lambda r: r["name"])
    return out
