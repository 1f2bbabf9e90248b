"""Builders of manifest documents for tests, and a one-call way to simulate them."""

from __future__ import annotations

import yaml

from allocation.engine.manifests import load_texts
from allocation.engine.simulation import simulate

DRIVER = "cards.dra.example.com"
API = "resource.k8s.io/v1alpha2"


def node(name: str, labels: dict | None = None, cpu: str = "8", memory: str = "32Gi",
         pods: str = "110", unschedulable: bool = False) -> dict:
    doc = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
           "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}}}
    if unschedulable:
        doc["spec"] = {"unschedulable": True}
    return doc


def device(name: str, **attrs) -> dict:
    """A named device; attribute values given as ``memory=("quantity", "16Gi")``."""
    return {"name": name, "attributes": [{"name": k, t: v} for k, (t, v) in attrs.items()]}


def named_slice(node_name: str, devices: list[dict], driver: str = DRIVER,
                name: str | None = None) -> dict:
    return {"apiVersion": API, "kind": "NodeResourceSlice",
            "metadata": {"name": name or f"{node_name}-{driver.split('.')[0]}"},
            "spec": {"nodeName": node_name, "driverName": driver,
                     "namedResourcesWithAttributes": devices}}


def resource_class(name: str = "gpu", driver: str = DRIVER, params: str | None = None,
                   **extra) -> dict:
    doc = {"apiVersion": API, "kind": "ResourceClass", "metadata": {"name": name},
           "driverName": driver, "structuredParameters": True, **extra}
    if params:
        doc["parametersRef"] = {"apiGroup": "resource.k8s.io",
                                "kind": "ResourceClassParameters", "name": params}
    return doc


def class_parameters(name: str, selector: str, driver: str = DRIVER) -> dict:
    return {"apiVersion": API, "kind": "ResourceClassParameters", "metadata": {"name": name},
            "filters": [{"driverName": driver,
                         "namedResourcesWithAttributes": {"selector": selector}}]}


def claim_parameters(name: str, *selectors: str, shareable: bool = False,
                     driver: str = DRIVER, namespace: str = "default") -> dict:
    doc = {"apiVersion": API, "kind": "ResourceClaimParameters",
           "metadata": {"name": name, "namespace": namespace},
           "requests": [{"driverName": driver, "namedResourcesWithAttributes": {
               "required": [{"selector": s} for s in selectors]}}]}
    if shareable:
        doc["shareable"] = True
    return doc


def _claim_spec(class_name: str, params: str | None, mode: str | None) -> dict:
    spec: dict = {"resourceClassName": class_name}
    if params:
        spec["parametersRef"] = {"apiGroup": "resource.k8s.io",
                                 "kind": "ResourceClaimParameters", "name": params}
    if mode:
        spec["allocationMode"] = mode
    return spec


def claim(name: str, class_name: str = "gpu", params: str | None = None,
          mode: str | None = None, namespace: str = "default", status: dict | None = None
          ) -> dict:
    doc = {"apiVersion": API, "kind": "ResourceClaim",
           "metadata": {"name": name, "namespace": namespace},
           "spec": _claim_spec(class_name, params, mode)}
    if status:
        doc["status"] = status
    return doc


def claim_template(name: str, class_name: str = "gpu", params: str | None = None,
                   namespace: str = "default") -> dict:
    return {"apiVersion": API, "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": _claim_spec(class_name, params, None)}}


def pod(name: str, claims: dict[str, str] | None = None, templates: dict[str, str] | None = None,
        cpu: str | None = None, memory: str | None = None, node_selector: dict | None = None,
        node_name: str | None = None, phase: str | None = None,
        namespace: str = "default") -> dict:
    """A pod; ``claims`` maps pod claim names to claims, ``templates`` to claim templates."""
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    entries = [{"name": k, "source": {"resourceClaimName": v}} for k, v in (claims or {}).items()]
    entries += [{"name": k, "source": {"resourceClaimTemplateName": v}}
                for k, v in (templates or {}).items()]
    container: dict = {"name": "main", "image": "example/app"}
    if requests:
        container["resources"] = {"requests": requests}
    spec: dict = {"containers": [container]}
    if entries:
        spec["resourceClaims"] = entries
    if node_selector:
        spec["nodeSelector"] = node_selector
    if node_name:
        spec["nodeName"] = node_name
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
           "spec": spec}
    if phase:
        doc["status"] = {"phase": phase}
    return doc


def to_yaml(docs: list[dict]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False)


def run(docs: list[dict], strategy: str = "first-fit"):
    """Simulate ``docs``; returns the Simulation (``.state``, ``.output()``)."""
    return simulate(load_texts([("test.yaml", to_yaml(docs))]), strategy)


def problems_of(text: str, name: str = "bad.yaml") -> list[str]:
    """The problem lines loading ``text`` gives (an empty list when it is valid)."""
    from allocation.engine.manifests import InvalidManifests

    try:
        load_texts([(name, text)])
    except InvalidManifests as exc:
        return [str(p) for p in exc.problems]
    return []
