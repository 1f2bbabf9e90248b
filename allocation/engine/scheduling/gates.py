"""Pods kube-scheduler leaves alone: those with scheduling gates (KEP-3521, GA in 1.30) and
those for another scheduler (``spec.schedulerName``) (docs/manifests.md, "Pods
kube-scheduler leaves alone").

A gated pod waits in the scheduler's queue (the SchedulingGates plugin's PreEnqueue)
until a controller removes its last gate; the API server gives it, when it is created
without one, the condition ``PodScheduled=False`` with reason ``SchedulingGated``
(``applySchedulingGatedCondition``). A pod for another scheduler is not kube-scheduler's
at all. Neither is attempted, marked Unschedulable or given an Event, so the cluster
autoscaler, which reads the ``Unschedulable`` reason, does not scale for them either.
The claim controller still makes their template claims (its ``podNeedsWork`` reads no
gate).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from allocation.engine.constants import DEFAULT_SCHEDULER

if TYPE_CHECKING:
    from allocation.engine.objects import Pod
    from allocation.engine.state import ClusterState

__all__ = ["GATED_REASON", "GATED_MESSAGE", "left_alone", "mark_gated", "other_scheduler"]

GATED_REASON = "SchedulingGated"
GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


def left_alone(pod: Pod) -> bool:
    """Whether kube-scheduler leaves the (unbound) ``pod`` alone: gated, or another
    scheduler's."""
    return bool(pod.scheduling_gates) or pod.scheduler_name != DEFAULT_SCHEDULER


def mark_gated(state: ClusterState, pod: Pod) -> bool:
    """Give a gated pod without a ``PodScheduled`` condition the one the API server gives
    it at creation (a document written without status, as most inputs are).

    Returns:
        Whether the pod changed.
    """
    if not pod.scheduling_gates or pod.condition("PodScheduled") is not None:
        return False
    return state.writable(pod).set_condition({
        "type": "PodScheduled", "status": "False", "reason": GATED_REASON,
        "message": GATED_MESSAGE, "lastTransitionTime": state.clock.stamp()})


def other_scheduler(pod: Pod) -> str | None:
    """Why nothing is said of another scheduler's unbound ``pod`` (its own scheduler sets
    its conditions), for the pages that would otherwise say it was not tried yet; None
    for kube-scheduler's pods."""
    if pod.scheduler_name == DEFAULT_SCHEDULER:
        return None
    return (f"left to scheduler {pod.scheduler_name!r}: the planner simulates kube-scheduler "
            f"({DEFAULT_SCHEDULER!r}), which does not schedule it")
