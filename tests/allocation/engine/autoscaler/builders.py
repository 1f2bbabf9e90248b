"""Documents for the autoscaler tests: node groups, pod templates, ProvisioningRequests."""

from __future__ import annotations

from tests.factories import DRIVER, claim_parameters, claim_template, device, resource_class

PLANNER = "draplanner.io/v1alpha1"


def gpu_devices(count: int) -> list[dict]:
    return [device(f"gpu-{i}", memory=("quantity", "40Gi")) for i in range(count)]


def node_group(name: str = "gpu-pool", max_size: int = 2, devices: int = 1, min_size: int = 0,
               capacity_from: str | None = None, labels: dict | None = None) -> dict:
    spec: dict = {"minSize": min_size, "maxSize": max_size, "template": {
        "metadata": {"labels": labels or {"pool": name}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}}
    if capacity_from:
        spec["capacityFromNode"] = capacity_from
    elif devices:
        spec["resourceSlices"] = [{"driverName": DRIVER,
                                   "namedResourcesWithAttributes": gpu_devices(devices)}]
    return {"apiVersion": PLANNER, "kind": "NodeGroup", "metadata": {"name": name},
            "spec": spec}


def pod_template(name: str = "worker", claims: dict | None = None, cpu: str | None = None,
                 annotations: dict | None = None) -> dict:
    """A PodTemplate whose pods take one claim from template ``gpu`` (or ``claims``)."""
    claims = {"gpu": "gpu"} if claims is None else claims
    container: dict = {"name": "main", "image": "example/app"}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    spec: dict = {"containers": [container]}
    if claims:
        spec["resourceClaims"] = [{"name": k, "source": {"resourceClaimTemplateName": v}}
                                  for k, v in claims.items()]
    meta = {"annotations": annotations} if annotations else {}
    return {"apiVersion": "v1", "kind": "PodTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "template": {"metadata": meta, "spec": spec}}


def provreq(name: str = "req", cls: str = "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
            pod_sets: list[tuple[str, int]] | None = None, seed: bool = False,
            valid_until: str | None = None, api: str = "autoscaling.x-k8s.io/v1") -> dict:
    spec: dict = {"podSets": [{"podTemplateRef": {"name": t}, "count": c}
                              for t, c in (pod_sets or [("worker", 1)])]}
    spec["provisioningClass" if seed else "provisioningClassName"] = cls
    if valid_until is not None:
        spec["Parameters" if seed else "parameters"] = {"ValidUntilSeconds": valid_until}
    return {"apiVersion": api, "kind": "ProvisioningRequest",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def gpu_basics() -> list[dict]:
    """Class ``gpu``, claim parameters and template ``gpu`` asking for one device."""
    return [resource_class("gpu"), claim_parameters("one", 'quantities["memory"] >= "1Gi"'),
            claim_template("gpu", params="one")]


def condition(obj: dict | object, type_: str) -> dict | None:
    conditions = obj.conditions if hasattr(obj, "conditions") else (
        (obj.get("status") or {}).get("conditions") or [])
    return next((c for c in conditions if c.get("type") == type_), None)


V1_DRIVER = "gpu.example.com"


def v1_devices(count: int, prefix: str = "gpu") -> list[dict]:
    return [{"name": f"{prefix}-{i}"} for i in range(count)]


def v1_node_group(name: str = "gpu-pool", max_size: int = 2, slices: list[dict] | None = None,
                  capacity_from: str | None = None) -> dict:
    """A NodeGroup with resource.k8s.io/v1 slice specs (default: one slice of 2 GPUs)."""
    group = node_group(name, max_size=max_size, devices=0, capacity_from=capacity_from)
    if capacity_from is None:
        group["spec"]["resourceSlices"] = slices if slices is not None else [
            {"driver": V1_DRIVER, "devices": v1_devices(2)}]
    return group
