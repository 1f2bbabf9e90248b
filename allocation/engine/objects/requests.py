"""A pod's resource requests as kube-scheduler reads them: ``resourcehelper.PodRequests``
(k8s.io/component-helpers ``resource/helpers.go``) over the requests the API server leaves
on each container, where a resource given only under ``limits`` is requested at its limit
(``SetDefaults_Pod``). docs/manifests.md, "Pod requests".

- Regular containers run together: their requests add up.
- A sidecar (an init container with ``restartPolicy: Always``) starts before the ones after
  it and keeps running: its requests add to the pod's, and to every later init container's.
- Another init container runs alone, beside the sidecars started before it: the pod needs
  the largest of those sums, if it exceeds the regular containers' total.
- Pod-level ``spec.resources.requests`` (PodLevelResources, beta and on from 1.34) replace
  the containers' cpu and memory; ``spec.overhead`` (a RuntimeClass's) adds to every total.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from allocation.engine.quantity import Quantity

__all__ = ["milli", "whole", "container_requests", "pod_requests", "is_sidecar"]

_POD_LEVEL = ("cpu", "memory")  # what pod-level resources may set besides hugepages


def _text(quantity: Any) -> str:
    # A number is a quantity too (`cpu: 1`): the schema accepts both forms.
    return quantity if isinstance(quantity, str) else str(quantity)


@lru_cache(maxsize=4096)  # a cluster repeats a few requests thousands of times
def _milli(text: str) -> int:
    return math.ceil(Quantity.parse(text).value * 1000)


@lru_cache(maxsize=4096)
def _whole(text: str) -> int:
    return math.ceil(Quantity.parse(text).value)


def milli(quantity: Any) -> int:
    """A quantity in thousandths, rounded up (cpu in millicores)."""
    return _milli(_text(quantity))


def whole(quantity: Any) -> int:
    """A quantity as a whole number, rounded up (memory in bytes, pod counts)."""
    return _whole(_text(quantity))


def _amount(name: str, quantity: Any) -> int:
    return milli(quantity) if name == "cpu" else whole(quantity)


def container_requests(container: dict) -> dict:
    """What ``container`` requests once the API server has defaulted it: its ``requests``,
    and its ``limits`` for each resource it does not request (``SetDefaults_Pod``).

    Returns:
        The quantities by resource name, as written (the container's own dict when it has
        no limits: do not change it).
    """
    resources = container.get("resources")
    if not resources:
        return {}
    requests = resources.get("requests") or {}
    limits = resources.get("limits")
    if not limits:
        return requests
    return {**limits, **requests}


def is_sidecar(container: dict) -> bool:
    """Whether an init container is a sidecar (``restartPolicy: Always``, KEP-753)."""
    return container.get("restartPolicy") == "Always"


def _add(total: dict[str, int], requests: dict) -> None:
    for name, quantity in requests.items():
        total[name] = total.get(name, 0) + _amount(name, quantity)


def pod_requests(spec: dict) -> dict[str, int]:
    """The pod's effective requests (``PodRequests``): cpu in millicores, every other
    resource as a whole number (bytes, devices).

    Returns:
        The totals by resource name; a name nothing requests is absent.
    """
    total: dict[str, int] = {}
    for container in spec.get("containers") or ():
        # inline for the usual container (requests only): read for every pod loaded
        resources = container.get("resources")
        if not resources:
            continue
        requests = container_requests(container) if resources.get("limits") \
            else resources.get("requests")
        if requests:
            for name, quantity in requests.items():
                total[name] = total.get(name, 0) + (
                    milli(quantity) if name == "cpu" else whole(quantity))
    inits = spec.get("initContainers")
    if inits:
        _with_init_containers(total, inits)
    pod_level = spec.get("resources")
    if pod_level:
        requests = {**(pod_level.get("limits") or {}), **(pod_level.get("requests") or {})}
        for name in _POD_LEVEL:
            if name in requests:
                total[name] = _amount(name, requests[name])
    overhead = spec.get("overhead")
    if overhead:
        _add(total, overhead)
    return total


def _with_init_containers(total: dict[str, int], inits: list) -> None:
    """Add the sidecars to ``total`` and raise it to the largest init container's need."""
    sidecars: dict[str, int] = {}
    largest: dict[str, int] = {}
    for container in inits:
        requests = container_requests(container)
        if is_sidecar(container):
            _add(total, requests)
            _add(sidecars, requests)
            running = sidecars
        else:
            running = dict(sidecars)
            _add(running, requests)
        for name, amount in running.items():
            if amount > largest.get(name, 0):
                largest[name] = amount
    for name, amount in largest.items():
        if amount > total.get(name, 0):
            total[name] = amount
