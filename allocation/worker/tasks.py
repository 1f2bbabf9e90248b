"""Running queued background tasks in a worker process (Django's tasks API).

Background evaluations (scenarios re-evaluated after the baseline moves, the controllers'
timers such as a ProvisioningRequest's re-check) are tasks of Django's tasks API, the
django-tasks backport for Django 5.2, queued by the backend ``settings.TASKS`` names
(docs/console.md, "Tasks"). The embedded console needs no extra process for them: the
serving process's in-process worker and ``manage.py worker`` each run a
:class:`TaskRunner` thread, which runs the queued tasks whenever a task is enqueued in its
process and every ``interval`` seconds (deferred tasks fall due without an enqueue).
More processes take a share of the queue with ``manage.py db_worker`` (database backend)
or ``manage.py rqworker --with-scheduler`` (Redis backend): each queue hands a task to one
runner only.
"""

from __future__ import annotations

import logging
import threading
import time

from django.db import close_old_connections, connections
from django.utils.crypto import get_random_string
from django_tasks import DEFAULT_TASK_BACKEND_ALIAS, task_backends
from django_tasks.signals import task_enqueued

from allocation.services import task_results

__all__ = ["TaskRunner", "run_pending"]

log = logging.getLogger(__name__)


def run_pending(alias: str = DEFAULT_TASK_BACKEND_ALIAS) -> int:
    """Run every task of backend ``alias`` that is due now, in this thread; how many ran.

    The database backend runs through django-tasks-db's own worker loop in batch mode
    (tasks claimed with ``SELECT ... FOR UPDATE SKIP LOCKED`` where the database has it),
    the Redis backend through an RQ worker in burst mode, which first moves deferred tasks
    that fell due into their queues. Other backends (immediate, dummy) queue nothing.
    """
    from django_tasks_db import DatabaseBackend

    backend = task_backends[alias]
    if isinstance(backend, DatabaseBackend):
        return _run_database(alias)
    if type(backend).__module__.startswith("django_tasks_rq"):
        return _run_redis(backend)
    return 0


def _run_database(alias: str) -> int:
    """django-tasks-db's worker, one task at a time until none is due: claimed in a
    transaction of its own (``SELECT ... FOR UPDATE SKIP LOCKED`` where the database has
    it, an exclusive transaction on SQLite), then run and its result stored."""
    from django_tasks_db.management.commands.db_worker import Worker
    from django_tasks_db.models import DBTaskResult
    from django_tasks_db.utils import exclusive_transaction

    worker_id = f"dra-{get_random_string(12)}"
    worker = Worker(queue_names=["*"], interval=0, batch=True, backend_name=alias,
                    startup_delay=False, max_tasks=None, excluded_queue_names=[],
                    worker_id=worker_id)
    ready = DBTaskResult.objects.ready().filter(backend_name=alias)
    done = 0
    while True:
        with exclusive_transaction(ready.db):
            claimed = ready.get_locked()
            if claimed is None:
                return done
            claimed.claim(worker_id)
        worker.run_task(claimed)
        done += 1


def _run_redis(backend) -> int:
    from rq.timeouts import TimerDeathPenalty
    from rq.worker import SimpleWorker

    class ThreadWorker(SimpleWorker):
        """RQ's worker without forking or signals (they belong to the main thread)."""

        death_penalty_class = TimerDeathPenalty
        ran = 0

        def _install_signal_handlers(self) -> None:
            pass

        def execute_job(self, job, queue) -> None:
            self.ran += 1
            super().execute_job(job, queue)

    queues = backend._get_queues()
    worker = ThreadWorker(queues, connection=queues[0].connection,
                          job_class=queues[0].job_class)
    worker.work(burst=True, with_scheduler=True, logging_level="WARNING")
    return worker.ran


class TaskRunner:
    """A daemon thread running the queued tasks of one backend until stopped."""

    PRUNE_EVERY = 3600.0
    """Seconds between two prunings of finished results (database backend)."""

    def __init__(self, interval: float = 1.0, alias: str = DEFAULT_TASK_BACKEND_ALIAS) -> None:
        self.interval = interval
        self.alias = alias
        self._pruned_at: float | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _enqueued(self, sender, task_result, **kwargs) -> None:
        if task_result.backend == self.alias:
            self._wake.set()

    def start(self) -> None:
        task_enqueued.connect(self._enqueued, weak=False)
        self._thread = threading.Thread(target=self.run, name="dra-tasks", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        task_enqueued.disconnect(self._enqueued)
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def prune(self) -> int | None:
        """Prune finished results of the database queue, at most every ``PRUNE_EVERY``
        seconds (``services.task_results``); how many, or None when not due."""
        from django_tasks_db import DatabaseBackend

        now = time.monotonic()
        if self._pruned_at is not None and now - self._pruned_at < self.PRUNE_EVERY:
            return None
        self._pruned_at = now
        if not isinstance(task_backends[self.alias], DatabaseBackend):
            return None  # RQ keeps its results for a while itself
        return task_results.prune()

    def run(self) -> None:
        log.info("task runner started (backend %r)", self.alias)
        try:
            while not self._stop.is_set():
                self._wake.wait(self.interval)
                self._wake.clear()
                if self._stop.is_set():
                    break
                try:
                    run_pending(self.alias)
                    self.prune()
                except Exception:  # keep running; the task stays queued or failed
                    log.exception("running queued tasks failed")
                finally:
                    close_old_connections()
        finally:
            connections.close_all()  # this thread's connections; it ends here
