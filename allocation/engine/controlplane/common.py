"""What the simulated drivers and the scheduler's side of the negotiation share.

The Event reasons below are the steps of the KEP-3063 negotiation; ``docs/controlplane.md``
says who records each one and on which object, so the console can draw the timeline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from allocation.engine import kinds
from allocation.engine.objects import Pod, PodSchedulingContext, ResourceClaim, ResourceClass

if TYPE_CHECKING:
    from allocation.engine.state import ClusterState

__all__ = [
    "POTENTIAL_NODES", "SELECTED_NODE", "UNSUITABLE_NODES",
    "ALLOCATED", "ALLOCATION_FAILED", "DEALLOCATION_REQUESTED", "DEALLOCATED",
    "CONTROLLER_MISSING", "controlled_claims", "new_context", "driver_finalizer", "pod_claims",
    "short_list",
]

POTENTIAL_NODES = "PotentialNodes"
SELECTED_NODE = "SelectedNode"
UNSUITABLE_NODES = "UnsuitableNodes"
ALLOCATED = "Allocated"
ALLOCATION_FAILED = "AllocationFailed"
DEALLOCATION_REQUESTED = "DeallocationRequested"
DEALLOCATED = "Deallocated"
CONTROLLER_MISSING = "ControllerMissing"


def driver_finalizer(controller_name: str) -> str:
    """The finalizer a driver puts on claims it allocates (as upstream's controller helper)."""
    return f"{controller_name}/deletion-protection"


def controlled_claims(state: ClusterState
                      ) -> dict[str, list[tuple[ResourceClaim, ResourceClass]]]:
    """The claims of classes a control-plane controller allocates, by controller, in
    document order, each with its class.

    Without such a class no claim is any controller's, and the claims are not walked: a
    kept pass (docs/console.md, "The kept state") of a structured-only cluster visits none.
    """
    claims: dict[str, list[tuple[ResourceClaim, ResourceClass]]] = {}
    if not any(rc.controller_name for rc in state.of_kind(ResourceClass)):
        return claims
    classes: dict = {}  # class name -> its ResourceClass (or None): most claims share one
    for claim in state.claims():
        name = claim.class_name
        if name not in classes:
            classes[name] = state.get("ResourceClass", None, name)
        rc = classes[name]
        if isinstance(rc, ResourceClass) and rc.controller_name:
            claims.setdefault(rc.controller_name, []).append((claim, rc))
    return claims


def new_context(pod: Pod) -> PodSchedulingContext:
    """An empty PodSchedulingContext owned by ``pod`` (the seed: the pod is its owner)."""
    return PodSchedulingContext({
        "apiVersion": kinds.POD_SCHEDULING_CONTEXT.preferred_version,
        "kind": "PodSchedulingContext",
        "metadata": {"name": pod.name, "namespace": pod.namespace,
                     "ownerReferences": [pod.owner_reference()]},
        "spec": {}})



def pod_claims(state: ClusterState, pod: Pod) -> list[tuple[str, ResourceClaim | None]]:
    """``(pod claim name, claim)`` for each ``spec.resourceClaims`` entry, in order."""
    return [(c.name, state.get("ResourceClaim", pod.namespace,
                               pod.claim_name(c))) for c in pod.claims]



def short_list(names: list[str], limit: int = 8) -> str:
    """``a, b, c`` or ``a, b, ... and 12 more``: node lists in Event messages stay readable."""
    if not names:
        return "none"
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"
