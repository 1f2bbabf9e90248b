"""Finished results of the database task queue, pruned so the queue's table stays small.

django-tasks-db keeps a row per task with its result; the scenario refresh and the
controllers' timers queue tasks all day (docs/console.md, "Tasks"). Every process that runs
the queue (``allocation.worker.tasks.TaskRunner``) prunes results finished longer ago than
:data:`KEEP` about once an hour, as ``manage.py prune_db_task_results`` would. Bookkeeping,
not a change of the cluster: no revision, no announcement.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

__all__ = ["KEEP", "prune"]

KEEP = timedelta(days=1)
"""How long a finished task's result is kept (to read why a task failed)."""


def prune(now: datetime | None = None, keep: timedelta = KEEP) -> int:
    """Delete the database queue's results finished before ``now - keep``; how many."""
    from django_tasks_db.models import DBTaskResult

    cutoff = (now or timezone.now()) - keep
    with transaction.atomic():
        deleted, _ = DBTaskResult.objects.filter(
            status__in=("SUCCESSFUL", "FAILED"), finished_at__lt=cutoff).delete()
    return deleted
