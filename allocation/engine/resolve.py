"""From a claim to what it asks for: class, parameters, and compiled requests.

``parametersRef`` resolution (spec section 2): a ResourceClaimParameters by name; else one
whose ``generatedFrom`` names the referenced vendor object. Class parameters likewise. The
vendor objects' contents are snapshotted into the allocation result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from allocation.engine.constants import RESOURCE_GROUP
from allocation.engine.models import Request, registry
from allocation.engine.objects import (
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClass,
    ResourceClassParameters,
)

__all__ = ["ClaimPlan", "plan_claim"]


@dataclass
class ClaimPlan:
    """What allocating one claim takes, or why it cannot be attempted (``error``)."""

    resource_class: ResourceClass | None = None
    requests: list[Request] = field(default_factory=list)
    shareable: bool = False
    vendor_class_parameters: Any = None
    vendor_claim_parameters: Any = None
    error: str | None = None
    key: tuple = ()

    @property
    def controller(self) -> str | None:
        rc = self.resource_class
        return rc.controller_name if rc is not None else None


def _matches(generated_from: dict | None, ref: dict) -> bool:
    if not generated_from:
        return False
    return (generated_from.get("kind") == ref.get("kind")
            and generated_from.get("name") == ref.get("name")
            and (generated_from.get("apiGroup") or "") == (ref.get("apiGroup") or ""))


def _class_parameters(state, rc: ResourceClass) -> tuple[list[dict], Any, str | None]:
    ref = rc.parameters_ref
    if ref is None:
        return [], None, None
    group = ref.get("apiGroup") or ""
    if ref["kind"] == "ResourceClassParameters" and group in ("", RESOURCE_GROUP):
        params = state.get("ResourceClassParameters", None, ref["name"])
        if params is None:
            return [], None, (f"resourceclassparameters {ref['name']!r} of class {rc.name!r} "
                              "not found")
        return params.filters, params.vendor_parameters, None
    for params in state.of_kind(ResourceClassParameters):
        if _matches(params.generated_from, ref):
            return params.filters, params.vendor_parameters, None
    vendor = state.vendor_object(group, ref["kind"], None, ref["name"])
    what = f"{ref['kind']} {ref['name']!r}"
    if vendor is None:
        return [], None, f"class parameters {what} of class {rc.name!r} not found"
    return [], None, (f"class parameters {what} of class {rc.name!r} have no "
                      "ResourceClassParameters generated from them yet")


def _claim_parameters(state, claim: ResourceClaim, rc: ResourceClass):
    ref = claim.parameters_ref
    if ref is None:
        return None, None
    group = ref.get("apiGroup") or ""
    if ref["kind"] == "ResourceClaimParameters" and group in ("", RESOURCE_GROUP):
        params = state.get("ResourceClaimParameters", claim.namespace, ref["name"])
        if params is None:
            return None, f"resourceclaimparameters {claim.namespace}/{ref['name']} not found"
        return params, None
    for params in state.of_kind(ResourceClaimParameters):
        if params.namespace == claim.namespace and _matches(params.generated_from, ref):
            return params, None
    vendor = state.vendor_object(group, ref["kind"], claim.namespace, ref["name"])
    what = f"{ref['kind']} {claim.namespace}/{ref['name']}"
    if vendor is None:
        return None, f"claim parameters {what} not found"
    return vendor, None


def _compile(rc: ResourceClass, params: ResourceClaimParameters | None,
             filters: list[dict]) -> tuple[list[Request], str | None]:
    requests: list[Request] = []
    for index, entry in enumerate(params.requests if params else ()):
        driver = entry["driverName"]
        model = next((m for m in registry.all_models() if entry.get(m.name) is not None), None)
        if model is None:
            return [], f"request {index} uses no structured model this planner knows"
        model_filters = [f[model.name] for f in filters
                         if f.get("driverName") == driver and f.get(model.name) is not None]
        requests.extend(model.compile_requests(driver, entry[model.name], model_filters,
                                               f"requests[{index}]"))
    return requests, None


def plan_claim(state, claim: ResourceClaim) -> ClaimPlan:
    """The plan for allocating ``claim`` with the objects currently in ``state``."""
    rc = state.get("ResourceClass", None, claim.class_name)
    if rc is None:
        return ClaimPlan(error=f"resourceclass {claim.class_name!r} not found")
    plan = ClaimPlan(resource_class=rc, key=(rc.name, claim.namespace,
                                             repr(sorted((claim.parameters_ref or {}).items()))))
    if rc.mode == "controller":
        return plan
    if rc.mode == "numeric":  # the hook resolves class parameters itself (vendor objects)
        hook = getattr(registry.get("counter"), "plan_numeric", None)
        if hook is None:
            plan.error = f"class {rc.name!r} uses numericParameters, which no model handles"
            return plan
        return hook(state, claim, rc, plan)
    filters, plan.vendor_class_parameters, error = _class_parameters(state, rc)
    if error:
        plan.error = error
        return plan
    found, error = _claim_parameters(state, claim, rc)
    if error:
        plan.error = error
        return plan
    if found is not None and not isinstance(found, ResourceClaimParameters):
        plan.error = (f"claim parameters {found.kind_name} {found.ref} have no "
                      "ResourceClaimParameters generated from them yet")
        return plan
    plan.shareable = bool(found and found.shareable)
    plan.vendor_claim_parameters = found.vendor_parameters if found else None
    plan.requests, plan.error = _compile(rc, found, filters)
    return plan
