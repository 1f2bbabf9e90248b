"""The allocation app; starts the in-process worker (and its task runner) when this process
serves the console."""

from __future__ import annotations

import os
import sys

from django.apps import AppConfig
from django.conf import settings

__all__ = ["AllocationConfig", "serving"]


def serving(argv: list[str] | None = None, environ=None) -> bool:
    """Whether this process serves HTTP: ``runserver`` (its serving child) or daphne."""
    argv = sys.argv if argv is None else argv
    environ = os.environ if environ is None else environ
    if len(argv) > 1 and argv[1] == "runserver":
        # With autoreload the parent process only watches files; the child serves.
        return environ.get("RUN_MAIN") == "true" or "--noreload" in argv
    return os.path.basename(argv[0]) in ("daphne", "uvicorn")


class AllocationConfig(AppConfig):
    """The domain app: cluster inventory, claims and simulations.

    The allocation algorithms live in ``allocation.engine``, a pure-Python
    library that never imports Django; this app wraps it with models, services,
    views and management commands. Keep ``allocation/__init__.py`` empty so
    ``import allocation.engine`` does not load Django.
    """

    name = "allocation"
    verbose_name = "DRA allocation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Services announce committed writes; the worker of this process (if any) wakes on
        # them. The services never import the worker (docs/architecture.md, "Layers").
        from allocation.services import broadcast
        from allocation.worker import runtime

        broadcast.subscribe(runtime.wake_on_commit)
        # The worker thread waits one poll interval before its first query, by which time
        # the app registry is complete.
        # The queued background tasks run in a thread of their own beside it, so the
        # embedded console needs no other process (docs/console.md, "Tasks").
        if getattr(settings, "DRA_WORKER_IN_PROCESS", False) and serving():
            from allocation.worker.loop import Worker
            from allocation.worker.tasks import TaskRunner

            Worker().start()
            TaskRunner().start()
