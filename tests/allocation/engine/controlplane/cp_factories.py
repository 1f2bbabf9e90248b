"""Builders for control-plane tests: DriverSimulations, controller classes, vendor parameters."""

from __future__ import annotations

from tests.factories import API

PLANNER = "draplanner.io/v1alpha1"
VENDOR_API = "net.example.com/v1"


def driver_sim(controller: str, pools: list[tuple[str, int, dict | None]],
               request_count: str | None = None, handle_data: str | None = None,
               name: str | None = None) -> dict:
    """A DriverSimulation; pools are ``(name, count, matchLabels or None)``."""
    spec: dict = {"controllerName": controller, "pools": [
        {"name": n, "count": c, **({"nodeSelector": {"matchLabels": s}} if s else {})}
        for n, c, s in pools]}
    if request_count:
        spec["requestCount"] = request_count
    if handle_data is not None:
        spec["handleData"] = handle_data
    return {"apiVersion": PLANNER, "kind": "DriverSimulation",
            "metadata": {"name": name or controller.split(".")[0]}, "spec": spec}


def cp_class(name: str, controller: str, suitable: dict | None = None) -> dict:
    doc = {"apiVersion": API, "kind": "ResourceClass", "metadata": {"name": name},
           "driverName": controller, "controllerName": controller}
    if suitable:
        doc["suitableNodes"] = suitable
    return doc


def vendor_params(name: str, count: int | str = 1, namespace: str = "default") -> dict:
    return {"apiVersion": VENDOR_API, "kind": "AcceleratorParameters",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"count": count}}


def _spec(class_name: str, params: str | None, mode: str | None) -> dict:
    spec: dict = {"resourceClassName": class_name}
    if params:
        spec["parametersRef"] = {"apiGroup": "net.example.com", "kind": "AcceleratorParameters",
                                 "name": params}
    if mode:
        spec["allocationMode"] = mode
    return spec


def cp_claim(name: str, class_name: str, params: str | None = None, mode: str | None = None,
             status: dict | None = None) -> dict:
    doc = {"apiVersion": API, "kind": "ResourceClaim",
           "metadata": {"name": name, "namespace": "default"},
           "spec": _spec(class_name, params, mode)}
    if status:
        doc["status"] = status
    return doc


def cp_template(name: str, class_name: str, params: str | None = None) -> dict:
    return {"apiVersion": API, "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": _spec(class_name, params, None)}}


def reasons(sim, kind: str, name: str, namespace: str | None = "default") -> list[str]:
    """The Event reasons recorded for one object, in order."""
    return [e["reason"] for e in sim.state.events.for_object(kind, namespace, name)]


def events_of(sim, kind: str, name: str, namespace: str | None = "default") -> list[dict]:
    return sim.state.events.for_object(kind, namespace, name)
