"""The worker running inside this process, if any, and how to wake it.

Services do not import the worker: ``allocation.apps`` subscribes :func:`wake_on_commit`
to the services' commit hook (``allocation.services.broadcast.subscribe``).
"""

from __future__ import annotations

import threading

__all__ = ["notify", "wake_on_commit", "register", "unregister", "current"]

_lock = threading.Lock()
_current = None


def register(worker) -> None:
    global _current
    with _lock:
        _current = worker


def unregister(worker) -> None:
    global _current
    with _lock:
        if _current is worker:
            _current = None


def current():
    """The worker of this process, or None."""
    return _current


def notify() -> None:
    """Wake this process's worker (a write was committed); no-op without one."""
    worker = _current
    if worker is not None:
        worker.wake()


def wake_on_commit(event) -> None:
    """Commit hook: a write of the cluster was committed (``cluster.changed``); wake up."""
    notify()
