"""From a claim to what it asks for: class, parameters, and compiled requests.

Planning dispatches on the class's :class:`~allocation.engine.objects.ClassMode`: a
control-plane driver allocates ``controller`` classes (KEP-3063); the registered model with
``plans_numeric`` plans ``numeric`` ones; ``structured`` ones compile their
ResourceClaimParameters' requests with the class's filters. Parameters are found by
``parameters.py`` (spec section 2); the vendor objects' contents are snapshotted into the
allocation result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from allocation.engine.models import Request, registry
from allocation.engine.objects import (
    ClassMode,
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClass,
    ResourceClassParameters,
)
from allocation.engine.parameters import claim_parameters, class_parameters, vendor_snapshot

if TYPE_CHECKING:
    from allocation.engine.state import ClusterState

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


def _plan_structured(state: ClusterState, claim: ResourceClaim, rc: ResourceClass,
                     plan: ClaimPlan) -> ClaimPlan:
    found, plan.error = class_parameters(state, rc)
    if plan.error:
        return plan
    if found is not None and not isinstance(found, ResourceClassParameters):
        plan.error = (f"class parameters {found.kind_name} {found.name!r} of class "
                      f"{rc.name!r} have no ResourceClassParameters generated from them yet")
        return plan
    filters = found.filters if found is not None else []
    plan.vendor_class_parameters = vendor_snapshot(found)
    params, plan.error = claim_parameters(state, claim)
    if plan.error:
        return plan
    if params is not None and not isinstance(params, ResourceClaimParameters):
        plan.error = (f"claim parameters {params.kind_name} {params.ref} have no "
                      "ResourceClaimParameters generated from them yet")
        return plan
    plan.shareable = bool(params and params.shareable)
    plan.vendor_claim_parameters = vendor_snapshot(params)
    plan.requests, plan.error = _compile(rc, params, filters)
    return plan


def plan_claim(state: ClusterState, claim: ResourceClaim) -> ClaimPlan:
    """The plan for allocating ``claim`` with the objects currently in ``state``.

    Returns:
        the plan; ``error`` says why the claim cannot be attempted (never raises).
    """
    rc = state.get("ResourceClass", None, claim.class_name)
    if rc is None:
        return ClaimPlan(error=f"resourceclass {claim.class_name!r} not found")
    plan = ClaimPlan(resource_class=rc, key=(rc.name, claim.namespace,
                                             repr(sorted((claim.parameters_ref or {}).items()))))
    match rc.mode:
        case ClassMode.CONTROLLER:  # a control-plane driver allocates (KEP-3063)
            return plan
        case ClassMode.NUMERIC:
            model = registry.numeric_model()
            if model is None:
                plan.error = f"class {rc.name!r} uses numericParameters, which no model handles"
                return plan
            return model.plan_numeric(state, claim, rc, plan)
        case _:
            return _plan_structured(state, claim, rc, plan)
