"""Finding a claim's and a class's parameters: one home for every ``parametersRef`` lookup.

A ``parametersRef`` (KEP-4381, spec section 2) names either a built-in parameters object
(ResourceClassParameters, ResourceClaimParameters of ``resource.k8s.io``) by name, or a
vendor object. For a vendor object the built-in one whose ``generatedFrom`` names it stands
in for it when ``generated`` is asked for; otherwise the vendor object itself is found.
Every function returns a :class:`Lookup`: what was found, or the reason nothing was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from allocation.engine.constants import RESOURCE_GROUP
from allocation.engine.objects import (
    KObject,
    ResourceClaimParameters,
    ResourceClassParameters,
)

if TYPE_CHECKING:
    from allocation.engine.objects import ResourceClaim, ResourceClass
    from allocation.engine.state import ClusterState

__all__ = ["Lookup", "names_builtin", "class_parameters", "claim_parameters",
           "vendor_snapshot"]


class Lookup(NamedTuple):
    """The object a ``parametersRef`` names (None when there is no reference), or why not."""

    found: KObject | None = None
    reason: str | None = None


def names_builtin(ref: dict, kind: str) -> bool:
    """Whether ``ref`` names the built-in ``kind`` of ``resource.k8s.io`` (not a vendor's)."""
    return ref["kind"] == kind and (ref.get("apiGroup") or "") in ("", RESOURCE_GROUP)


def _generated_from(generated: dict | None, ref: dict) -> bool:
    if not generated:
        return False
    return (generated.get("kind") == ref.get("kind")
            and generated.get("name") == ref.get("name")
            and (generated.get("apiGroup") or "") == (ref.get("apiGroup") or ""))


def class_parameters(state: ClusterState, rc: ResourceClass) -> Lookup:
    """The class's ResourceClassParameters (by name or ``generatedFrom``) or vendor object.

    Returns:
        the lookup; ``reason`` names the class when nothing is found.
    """
    ref = rc.parameters_ref
    if ref is None:
        return Lookup()
    if names_builtin(ref, "ResourceClassParameters"):
        params = state.get("ResourceClassParameters", None, ref["name"])
        if params is None:
            return Lookup(reason=f"resourceclassparameters {ref['name']!r} of class "
                                 f"{rc.name!r} not found")
        return Lookup(params)
    for params in state.of_kind(ResourceClassParameters):
        if _generated_from(params.generated_from, ref):
            return Lookup(params)
    vendor = state.vendor_object(ref.get("apiGroup") or "", ref["kind"], None, ref["name"])
    if vendor is None:
        return Lookup(reason=f"class parameters {ref['kind']} {ref['name']!r} of class "
                             f"{rc.name!r} not found")
    return Lookup(vendor)


def claim_parameters(state: ClusterState, claim: ResourceClaim,
                     generated: bool = True) -> Lookup:
    """The claim's ResourceClaimParameters or vendor object, in the claim's namespace.

    With ``generated`` a ResourceClaimParameters generated from the named vendor object
    is preferred to it (structured parameters); without, the vendor object is found.

    Returns:
        the lookup; ``reason`` names the missing object.
    """
    ref = claim.parameters_ref
    if ref is None:
        return Lookup()
    if names_builtin(ref, "ResourceClaimParameters"):
        params = state.get("ResourceClaimParameters", claim.namespace, ref["name"])
        if not isinstance(params, ResourceClaimParameters):
            return Lookup(reason=f"resourceclaimparameters {claim.namespace}/{ref['name']} "
                                 "not found")
        return Lookup(params)
    if generated:
        for params in state.of_kind(ResourceClaimParameters):
            if params.namespace == claim.namespace and _generated_from(
                    params.generated_from, ref):
                return Lookup(params)
    vendor = state.vendor_object(ref.get("apiGroup") or "", ref["kind"], claim.namespace,
                                 ref["name"])
    if vendor is None:
        return Lookup(reason=f"claim parameters {ref['kind']} {claim.namespace}/{ref['name']} "
                             "not found")
    return Lookup(vendor)


def vendor_snapshot(found: KObject | None) -> Any:
    """What an allocation records of parameters: a built-in's ``vendorParameters``, or the
    vendor object as written."""
    if found is None:
        return None
    if isinstance(found, ResourceClassParameters | ResourceClaimParameters):
        return found.vendor_parameters
    return found.raw
