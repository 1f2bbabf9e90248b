"""Planning a claim of a ``numericParameters`` class: vendor object, class entry, template.

Resolution (spec section 2): the claim's ``parametersRef`` names a vendor parameters object;
the class's ``numericParameters`` entry whose ``kind`` (and ``apiVersion``, when the entry
sets one) match that object's is expanded as a template over it and decoded into the counter
Parameters type. The class's own ``parametersRef`` (a ResourceClassParameters, one generated
from a vendor object, or the vendor object itself) is snapshotted as
``vendorClassParameters``; the claim's vendor object as ``vendorClaimParameters``.
Every failure sets ``plan.error`` with the reason; nothing here raises.
"""

from __future__ import annotations

import json
from typing import Any

from allocation.engine.constants import RESOURCE_GROUP
from allocation.engine.models.base import Request
from allocation.engine.models.counter import (
    CounterModel,
    TemplateError,
    decode_parameters,
    expand_template,
)

__all__ = ["plan_numeric", "class_snapshot"]


def _matches(generated_from: dict | None, ref: dict) -> bool:
    return bool(generated_from) and generated_from.get("kind") == ref.get("kind") and \
        generated_from.get("name") == ref.get("name") and \
        (generated_from.get("apiGroup") or "") == (ref.get("apiGroup") or "")


def _cluster_vendor(state, group: str, kind: str, name: str):
    """A vendor object referenced from a class: cluster-scoped, i.e. without a namespace."""
    return state.vendor_object(group, kind, None, name)


def class_snapshot(state, rc) -> tuple[Any, str | None]:
    """The vendor class parameters to snapshot for ``rc``, or why they cannot be found."""
    from allocation.engine.objects import ResourceClassParameters

    ref = rc.parameters_ref
    if ref is None:
        return None, None
    group = ref.get("apiGroup") or ""
    if ref["kind"] == "ResourceClassParameters" and group in ("", RESOURCE_GROUP):
        params = state.get("ResourceClassParameters", None, ref["name"])
        if params is None:
            return None, (f"resourceclassparameters {ref['name']!r} of class {rc.name!r} "
                          "not found")
        return params.vendor_parameters, None
    for params in state.of_kind(ResourceClassParameters):
        if _matches(params.generated_from, ref):
            return params.vendor_parameters, None
    vendor = _cluster_vendor(state, group, ref["kind"], ref["name"])
    if vendor is None:
        return None, f"class parameters {ref['kind']} {ref['name']!r} of class {rc.name!r} " \
                     "not found"
    return vendor.raw, None


def _accepted(rc) -> str:
    return ", ".join(f"{e.get('apiVersion') or '*'} {e['kind']}" for e in rc.numeric_parameters)


def _claim_vendor(state, claim, rc) -> tuple[Any, str | None]:
    ref = claim.parameters_ref
    if ref is None:
        return None, (f"class {rc.name!r} uses numericParameters: the claim needs a "
                      f"parametersRef to a vendor parameters object ({_accepted(rc)})")
    group = ref.get("apiGroup") or ""
    if ref["kind"] == "ResourceClaimParameters" and group in ("", RESOURCE_GROUP):
        return None, (f"class {rc.name!r} uses numericParameters, which take the vendor "
                      f"parameters object itself ({_accepted(rc)}), not a "
                      "ResourceClaimParameters")
    vendor = state.vendor_object(group, ref["kind"], claim.namespace, ref["name"])
    if vendor is None:
        return None, f"claim parameters {ref['kind']} {claim.namespace}/{ref['name']} not found"
    return vendor, None


def plan_numeric(model: CounterModel, state, claim, rc, plan):
    """``plan`` filled with the counter request of ``claim``, or with ``plan.error``."""
    plan.vendor_class_parameters, error = class_snapshot(state, rc)
    if error:
        plan.error = error
        return plan
    vendor, error = _claim_vendor(state, claim, rc)
    if error:
        plan.error = error
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
