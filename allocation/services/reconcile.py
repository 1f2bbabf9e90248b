"""One worker pass on the baseline: the engine loop of ``simulate`` on the stored cluster.

A pass reads a consistent snapshot (rows and revision), runs every controller to a fixed
point with the clock at the real time (timers already due run too), and saves only the
objects whose documents changed, plus the new Events, in ONE transaction. The save is
refused, and nothing is written, when the stored cluster changed since the snapshot
(``stale``: the next pass starts again from the new input) or when the worker no longer
holds the lease (``lost-lease``). A pass that dies half-way leaves the state as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from allocation.engine.manifests import build_object
from allocation.engine.simulation import Simulation
from allocation.models import canonical_json
from allocation.services.cluster import cluster_row, locked_cluster
from allocation.services.store import event_rows, loaded_from_rows, stored_rows
from allocation.services.writes import Plan, apply_plan, commit_revision, plan_changes

__all__ = ["PassResult", "reconcile", "SAVED", "UNCHANGED", "STALE", "LOST_LEASE"]

SAVED, UNCHANGED, STALE, LOST_LEASE = "saved", "unchanged", "stale", "lost-lease"


@dataclass
class PassResult:
    """How a pass ended, at which revision, what changed and when the next timer is due."""

    outcome: str
    revision: int
    kinds: list[str] = field(default_factory=list)
    rounds: int = 0
    next_wakeup: datetime | None = None


def _next_wakeup(simulation: Simulation) -> datetime | None:
    return simulation.next_wakeup()


def _name_events(items: list[dict], sequence: int) -> tuple[list, int]:
    """The new Events as engine objects, named ``<object>.<n>`` from the stored sequence.

    The engine numbers Events from 1 in every run; the baseline runs many times, so the
    worker numbers them on from the last stored one to keep names unique.
    """
    out = []
    for item in items:
        sequence += 1
        event = dict(item)
        involved = event.get("involvedObject") or {}
        event["metadata"] = {**event.get("metadata", {}),
                             "name": f"{involved.get('name', 'event')}.{sequence:08d}"}
        out.append(build_object(event))
    return out, sequence


def save_plan(cluster, plan: Plan) -> None:
    """Apply a pass's plan (separate so tests can make it fail half-way)."""
    apply_plan(cluster, plan)


def reconcile(holds_lease=None, now: datetime | None = None,
              strategy: str = "first-fit") -> PassResult:
    """Run one pass; ``holds_lease()`` (if given) is asked inside the save transaction."""
    now = now or timezone.now()
    with transaction.atomic():  # a consistent snapshot of rows and revision
        snapshot = cluster_row()
        version = (snapshot.revision, snapshot.token)
        rows, events = stored_rows(), event_rows()
    simulation = Simulation.from_loaded(loaded_from_rows(rows, events), strategy, now)
    adopted = len(simulation.state.events.items)
    rounds = simulation.settle()
    simulation.advance(timedelta(0))  # timers due by now (back-off, ValidUntilSeconds)
    desired = [(o, canonical_json(o.to_manifest())) for o in simulation.state.all_objects()]
    plan = plan_changes(rows, desired, prune=True)
    new_events, sequence = _name_events(simulation.state.events.items[adopted:],
                                        snapshot.event_sequence)
    plan.create.extend((e, canonical_json(e.raw)) for e in new_events)
    result = PassResult(UNCHANGED, version[0], plan.kinds, rounds, _next_wakeup(simulation))
    with transaction.atomic():
        cluster = locked_cluster()
        if (cluster.revision, cluster.token) != version:
            result.outcome, result.revision = STALE, cluster.revision
            return result
        if holds_lease is not None and not holds_lease():
            result.outcome = LOST_LEASE
            return result
        if plan:
            save_plan(cluster, plan)
            cluster.event_sequence = sequence
            result.revision = commit_revision(cluster, plan.kinds)
            result.outcome = SAVED
        cluster.reconciled_revision = cluster.revision
        cluster.save(update_fields=["reconciled_revision", "event_sequence", "revision",
                                    "token", "next_position"])
    return result
