"""What the simulation asks of every controller (``docs/architecture.md``).

The claim controller, the scheduler, the simulated drivers and the autoscaler each
reconcile the state once per round; ``simulation.py`` builds them in a fixed order.
Four methods are optional: ``pod_bound`` (a ``scheduler.BoundListener``, told of each pod
the scheduler binds; ``Simulation.on`` connects it), ``warm`` (bring what is kept lazily
up to date after a pass: ``Simulation.warm``), ``begin_settle`` (forget what is kept for
the rounds of one settle: ``Simulation.settle``) and ``begin_pass`` (what is told once per
pass: ``services/incremental.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from datetime import datetime

    from allocation.engine.state import ClusterState

__all__ = ["Controller"]


@runtime_checkable
class Controller(Protocol):
    """One controller of the simulation."""

    name: str
    """Its name in logs and tests."""

    def reconcile(self, state: ClusterState) -> bool:
        """Act once on ``state``; whether anything changed."""

    def next_wakeup(self, state: ClusterState) -> datetime | None:
        """When a timer of this controller next falls due, or None without one."""
