"""Background re-evaluation of scenarios after the baseline changes.

A scenario is evaluated on the current baseline; when the baseline moves on (an upload, the
worker's own reconcile), :func:`refresh_stale` re-evaluates every scenario whose stored
outcome belongs to an older revision and pushes the result to its page. It runs as a task
(``scenarios.tasks.refresh_scenarios``), queued after the commit that moved the baseline.
The processes running tasks share the work: each claims scenarios with
``SELECT ... FOR UPDATE SKIP LOCKED`` where the database supports it (PostgreSQL), so two
processes never evaluate the same scenario. It only reads and locks; every write is a
service's (``scenarios.services.refresh``, ``record_refresh_failure``).
"""

from __future__ import annotations

import logging
from contextlib import nullcontext

from django.db import connection, transaction
from django.db.models import Q

from allocation.services import cluster
from scenarios import services
from scenarios.models import Scenario

__all__ = ["refresh_stale", "stale"]

log = logging.getLogger(__name__)


def stale(revision: int):
    """The scenarios whose stored outcome is older than ``revision`` (or missing)."""
    return Scenario.objects.filter(Q(evaluated_revision__isnull=True) |
                                   Q(evaluated_revision__lt=revision))


def _claim_one(revision: int) -> Scenario | None:
    behind = stale(revision).order_by("updated_at")
    if connection.features.has_select_for_update_skip_locked:
        behind = behind.select_for_update(skip_locked=True)
    return behind.first()


def refresh_stale(limit: int | None = None) -> int:
    """Re-evaluate scenarios behind the current baseline revision; how many were done."""
    done = 0
    while limit is None or done < limit:
        revision = cluster.revision()
        # PostgreSQL: the transaction holds the row lock while this process evaluates it.
        # SQLite has no row locks: a transaction there would hold the write lock of the
        # whole database during the evaluation (every transaction begins IMMEDIATE,
        # console.env), so writes would wait for it; two processes may then evaluate one
        # scenario twice, which only costs time.
        row_locks = connection.features.has_select_for_update_skip_locked
        claim = transaction.atomic() if row_locks else nullcontext()
        with claim:
            scenario = _claim_one(revision)
            if scenario is None:
                return done
            try:
                # PostgreSQL: a savepoint, so a failed query leaves the claim's transaction
                # usable; SQLite runs in autocommit here (see above).
                with transaction.atomic() if row_locks else nullcontext():
                    services.refresh(scenario)
            except Exception:  # one broken scenario must not stop the others
                log.exception("could not re-evaluate scenario %s", scenario.pk)
                services.record_refresh_failure(scenario, revision)
        done += 1
    return done
