"""Binding a pod: allocate its structured claims, reserve them, bind, or say why not.

The scheduler, the negotiation (KEP-3063) and the autoscaler's simulation all place pods
through these functions, so a pod they place looks the same whoever placed it. Every
function changes the state through ``state.writable`` (``ClusterState.fork``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from allocation.engine.constants import EXPLAIN_ANNOTATION, STRUCTURED_FINALIZER
from allocation.engine.objects import Allocation, ObjectKey, PodSchedulingContext
from allocation.engine.objects.resource import node_selector_for

if TYPE_CHECKING:
    from allocation.engine.objects import Node, Pod, ResourceClaim
    from allocation.engine.resolve import ClaimPlan
    from allocation.engine.scheduling.fit import Picks
    from allocation.engine.scheduling.needs import PodNeeds
    from allocation.engine.state import ClusterState

__all__ = ["allocate", "reserve", "reserve_for", "commit", "bind", "explain_text",
           "mark_unschedulable", "mark_waiting", "context_key", "context_of", "drop_context"]


def allocate(state: ClusterState, claim: ResourceClaim, plan: ClaimPlan, node_name: str,
             picks: Picks) -> None:
    """Write a structured allocation of ``picks`` on ``node_name`` into ``claim``."""
    _allocate_into(state, state.writable(claim), plan, node_name, picks)


def _allocate_into(state: ClusterState, claim: ResourceClaim, plan: ClaimPlan,
                   node_name: str, picks: Picks) -> None:
    """:func:`allocate` into ``claim``, this state's writable version already."""
    handles = []
    # (driver, model name) -> (model, candidates), in the order first picked
    grouped: dict[tuple[str, str], tuple] = {}
    for inventory, candidate in picks:
        model = inventory.model
        key = (inventory.driver_name, model.name)
        found = grouped.get(key)
        if found is None:
            grouped[key] = (model, [candidate])
        else:
            found[1].append(candidate)
    class_parameters = plan.vendor_class_parameters
    claim_parameters = plan.vendor_claim_parameters
    for (driver, model_name), (model, candidates) in grouped.items():
        # the keys in this order, those without a value left out (the output's order)
        data = {}
        if class_parameters is not None:
            data["vendorClassParameters"] = class_parameters
        if claim_parameters is not None:
            data["vendorClaimParameters"] = claim_parameters
        data["nodeName"] = node_name
        data[model_name] = model.encode_result(candidates)
        handles.append({"driverName": driver, "structuredData": data})
    claim.allocation = Allocation(handles=handles, shareable=plan.shareable,
                                  node_name=node_name,
                                  available_on_nodes=node_selector_for(node_name),
                                  picks=list(picks))
    claim.driver_name = plan.resource_class.driver_name
    if len(grouped) == 1:  # one model (the common claim): its finalizer, nothing to sort
        ((model, _candidates),) = grouped.values()
        wanted = [model.finalizer]
    else:
        wanted = sorted({model.finalizer for model, _ in grouped.values()}
                        or {STRUCTURED_FINALIZER})
    finalizers = claim.meta.finalizers
    for finalizer in wanted:
        if finalizer not in finalizers:
            finalizers.append(finalizer)
    claim.pending_reason = None
    state.events.record(claim, "Normal", "Allocated",
                        f"Allocated on node {node_name}"
                        + (": " + ", ".join([c.id for _, c in picks]) if picks else ""))


def reserve_for(claim: ResourceClaim, pod: Pod) -> None:
    """Add ``pod`` to a writable claim's ``reservedFor`` unless it is there already."""
    if pod.name not in claim.reserved_pods():
        claim.reserved_for.append({"resource": "pods", "name": pod.name, "uid": pod.meta.uid})


def reserve(state: ClusterState, claim: ResourceClaim, pod: Pod) -> None:
    """Add ``pod`` to the claim's ``reservedFor`` if it is not there yet."""
    reserve_for(state.writable(claim), pod)


def context_key(pod: Pod) -> ObjectKey:
    """The key of ``pod``'s PodSchedulingContext (same name and namespace)."""
    return ObjectKey("PodSchedulingContext", pod.namespace, pod.name)


def context_of(state: ClusterState, pod: Pod) -> PodSchedulingContext | None:
    """The PodSchedulingContext of ``pod`` (same name and namespace), if any."""
    meta = pod.meta
    return state.get("PodSchedulingContext", meta.namespace, meta.name)


def drop_context(state: ClusterState, pod: Pod) -> None:
    """Delete the pod's PodSchedulingContext once the pod is bound (the scheduler's last step,
    KEP-3063)."""
    context = context_of(state, pod)
    if context is not None:
        state.remove(context)


def commit(state: ClusterState, pod: Pod, node: Node, needs: PodNeeds, picks: Picks) -> None:
    """Record the allocations in the claims, reserve them, bind the pod.

    Each object is made writable once (a pending claim is allocated and reserved through
    one copy): every ``writable`` appends to ``state.touched``, which each controller's
    quiet memo reads at its next round (engine/quiet.py). The Events come in the same
    order: each pending claim's ``Allocated``, then the pod's ``Scheduled``.
    """
    pod = state.writable(pod)
    node_name = node.name
    pending = []
    if len(needs.pending) == 1:  # the common pod: every want, so every pick, is its claim's
        claim, plan = needs.pending[0]
        mine = [pick for _want, pick in zip(needs.wants, picks, strict=True)]
        claim = state.writable(claim)
        _allocate_into(state, claim, plan, node_name, mine)
        pending.append(claim)
    else:
        by_owner: dict[str, list] = {}
        for want, pick in zip(needs.wants, picks, strict=True):
            by_owner.setdefault(want.owner, []).append(pick)
        for claim, plan in needs.pending:
            claim = state.writable(claim)
            _allocate_into(state, claim, plan, node_name, by_owner.get(claim.ref, []))
            pending.append(claim)
    for claim in needs.allocated:
        reserve(state, claim, pod)
    for claim in pending:
        reserve_for(claim, pod)
    _bind_writable(state, pod, node)


def bind(state: ClusterState, pod: Pod, node: Node) -> None:
    """Bind ``pod`` to ``node`` (its claims done): charge the node, record ``Scheduled``,
    set ``PodScheduled=True``, drop the explanation and the scheduling context."""
    _bind_writable(state, state.writable(pod), node)


def _bind_writable(state: ClusterState, pod: Pod, node: Node) -> None:
    """:func:`bind` of ``pod``, this state's writable version already."""
    node_name = node.name  # read once: asked per pod bound
    if pod.node_name != node_name:
        pod.node_name = node_name
        state.charge(pod, node_name, +1)
        state.events.record(pod, "Normal", "Scheduled",
                            f"Successfully assigned {pod.ref} to {node_name}")
    pod.set_condition({"type": "PodScheduled", "status": "True",
                       "lastTransitionTime": state.clock.stamp()})
    pod.meta.annotations.pop(EXPLAIN_ANNOTATION, None)
    drop_context(state, pod)


def explain_text(message: str, detail: dict) -> str:
    """The ``draplanner.io/explain`` annotation's text: the summary and the detail."""
    return json.dumps({"summary": message, **detail}, sort_keys=True)


def mark_unschedulable(state: ClusterState, pod: Pod, message: str, detail: dict,
                       reason: str = "Unschedulable", *, explain: str | None = None) -> bool:
    """Set the Unschedulable condition and the explain annotation, with an Event on change.

    ``reason`` is the condition's reason: kube-scheduler says ``SchedulerError``
    (``faults.SCHEDULER_ERROR``) when the attempt failed rather than found no node.
    ``explain``, when given, is the annotation's text already made (``explain_text`` of
    ``message`` and ``detail``).

    Returns:
        False: recording a failure is not progress (``Simulation.settle``).
    """
    pod = state.writable(pod)
    if explain is None:
        explain = explain_text(message, detail)
    changed = pod.set_condition({"type": "PodScheduled", "status": "False",
                                 "reason": reason, "message": message,
                                 "lastTransitionTime": state.clock.stamp()})
    if pod.meta.annotations.get(EXPLAIN_ANNOTATION) != explain:
        pod.meta.annotations[EXPLAIN_ANNOTATION] = explain
    if changed:
        state.events.record(pod, "Warning", "FailedScheduling", message)
    return False


def mark_waiting(state: ClusterState, pod: Pod, message: str) -> bool:
    """The pod waits for drivers: a condition but no Event (the context's Events tell).

    Returns:
        False, as :func:`mark_unschedulable`.
    """
    pod = state.writable(pod)
    pod.set_condition({"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                       "message": message, "lastTransitionTime": state.clock.stamp()})
    pod.meta.annotations[EXPLAIN_ANNOTATION] = json.dumps({"summary": message},
                                                          sort_keys=True)
    return False
