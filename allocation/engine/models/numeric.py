"""Planning a claim of a ``numericParameters`` class: vendor object, class entry, template.

Resolution (spec section 2, ``docs/models.md``): the claim's ``parametersRef`` names a vendor
parameters object; the class's ``numericParameters`` entry whose ``kind`` (and
``apiVersion``, when the entry sets one) match that object's is expanded as a template over
it and decoded into the counter Parameters type. The class's own ``parametersRef`` (a
ResourceClassParameters, one generated from a vendor object, or the vendor object itself) is
snapshotted as ``vendorClassParameters``; the claim's vendor object as
``vendorClaimParameters``. Parameters are found by ``allocation/engine/parameters.py``.
Every failure sets ``plan.error`` with the reason; nothing here raises.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from allocation.engine.models.base import Request, StructuredModel
from allocation.engine.models.counter_template import (
    TemplateError,
    decode_parameters,
    expand_template,
)
from allocation.engine.parameters import (
    claim_parameters,
    class_parameters,
    names_builtin,
    vendor_snapshot,
)

if TYPE_CHECKING:
    from allocation.engine.objects import KObject, ResourceClaim, ResourceClass
    from allocation.engine.resolve import ClaimPlan
    from allocation.engine.state import ClusterState

__all__ = ["plan_numeric"]


def _accepted(rc: ResourceClass) -> str:
    return ", ".join(f"{e.get('apiVersion') or '*'} {e['kind']}" for e in rc.numeric_parameters)


def _claim_vendor(state: ClusterState, claim: ResourceClaim, rc: ResourceClass
                  ) -> tuple[KObject | None, str | None]:
    ref = claim.parameters_ref
    if ref is None:
        return None, (f"class {rc.name!r} uses numericParameters: the claim needs a "
                      f"parametersRef to a vendor parameters object ({_accepted(rc)})")
    if names_builtin(ref, "ResourceClaimParameters"):
        return None, (f"class {rc.name!r} uses numericParameters, which take the vendor "
                      f"parameters object itself ({_accepted(rc)}), not a "
                      "ResourceClaimParameters")
    return claim_parameters(state, claim, generated=False)


def plan_numeric(model: StructuredModel, state: ClusterState, claim: ResourceClaim,
                 rc: ResourceClass, plan: ClaimPlan) -> ClaimPlan:
    """``plan`` filled with the counter request of ``claim``, or with ``plan.error``."""
    found, plan.error = class_parameters(state, rc)
    if plan.error:
        return plan
    plan.vendor_class_parameters = vendor_snapshot(found)
    vendor, plan.error = _claim_vendor(state, claim, rc)
    if plan.error:
        return plan
    found = next(((i, e) for i, e in enumerate(rc.numeric_parameters)
                  if e.get("kind") == vendor.kind_name
                  and (not e.get("apiVersion") or e["apiVersion"] == vendor.api_version)), None)
    if found is None:
        plan.error = (f"class {rc.name!r} has no numericParameters entry for "
                      f"{vendor.api_version} {vendor.kind_name} (it accepts {_accepted(rc)})")
        return plan
    index, entry = found
    where = f"class {rc.name!r} numericParameters[{index}].celTemplate"
    try:
        demand = decode_parameters(expand_template(entry["celTemplate"], vendor.raw))
    except TemplateError as exc:
        plan.error = f"{where} over {vendor.kind_name} {vendor.ref}: {exc}"
        return plan
    except Exception as exc:  # a template must never crash the run
        plan.error = f"{where} over {vendor.kind_name} {vendor.ref}: cannot expand: {exc}"
        return plan
    selector = json.dumps(demand.selector, sort_keys=True) if demand.selector else ""
    sources = (f"required: {demand.required}",) + ((f"selector: {selector}",) if selector
                                                   else ())
    plan.requests = [Request(driver_name=rc.driver_name, model=model, payload=demand,
                             label=f"numericParameters[{index}]",
                             key=(rc.driver_name, model.name, demand.required, selector),
                             sources=sources)]
    plan.shareable = bool(entry.get("shareable"))
    plan.vendor_claim_parameters = vendor.raw
    return plan
