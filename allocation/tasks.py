"""The baseline's background tasks (Django's tasks API; docs/console.md, "Tasks").

The controllers' timers (a ProvisioningRequest re-checked after ``CapacityIsNotFound``, a
request's ``ValidUntilSeconds`` running out, a scheduling back-off) are judged inside a
worker pass, on the settled state and under the lease: the autoscaler may add nodes, so the
re-check cannot run beside the pass. What runs as a task is the timer itself: after a pass,
the worker enqueues :data:`timers_due` deferred to the controllers' next timer
(``run_after``), and when it runs, in any process of the task queue, it records the timer
as due (``services.cluster.timers_due``); the worker that holds the lease sees that on its
next poll and passes again, whichever process it runs in.
"""

from __future__ import annotations

from datetime import datetime

from django_tasks import task

from allocation.services import cluster

__all__ = ["timers_due", "enqueue_timer"]


@task()
def timers_due(due: str) -> bool:
    """The controllers' timer at ``due`` (ISO 8601) fell due: ask for a pass."""
    return cluster.timers_due(datetime.fromisoformat(due))


def enqueue_timer(due: datetime) -> None:
    """Queue :data:`timers_due` to run at ``due``."""
    timers_due.using(run_after=due).enqueue(due.isoformat())
