"""Scenario refresh as a background task (Django's tasks API; docs/scenarios.md).

When a committed write moves the baseline, the commit hook :func:`enqueue_refresh`
(subscribed in ``scenarios.apps`` to ``allocation.services.broadcast``, so it runs after
commit, in the process that wrote) queues :data:`refresh_scenarios` if a scenario is
behind the new revision. Whichever process runs the task (the in-process worker's task
thread, ``manage.py worker``, ``db_worker``, an RQ worker) re-evaluates the scenarios still
behind (``scenarios.worker.refresh_stale``: several runners share them, each scenario
claimed by one where the database locks rows).
"""

from __future__ import annotations

from django_tasks import task

from console.events import ClusterChanged
from scenarios.worker import refresh_stale, stale

__all__ = ["refresh_scenarios", "enqueue_refresh"]


@task()
def refresh_scenarios() -> int:
    """Re-evaluate every scenario behind the baseline; how many this run did."""
    return refresh_stale()


def enqueue_refresh(event: ClusterChanged) -> None:
    """Commit hook: the baseline is at ``event["revision"]``; queue a refresh if a scenario
    is behind it (no scenario, no task)."""
    if stale(event["revision"]).exists():
        refresh_scenarios.enqueue()
