"""Python's cyclic garbage collector around the scenario pages' requests.

A drop at 5,000 nodes evaluates the scenario on a fork of the baseline (tens of MB of young
containers: the fork's copies of the baseline's indexes and memos) and renders the body.
With the collector running, every young collection during the request walked those
containers again (gen0 walks of 50-90 ms, gen1 of 50-250 ms per drop), and each evaluation
dropped from the cache (``scenarios/evaluation.py``) was cyclic garbage (the engine's
state, its index and its controllers refer to each other) that only a full collection
frees: the web process grew by 20-25 MB a drop until one fell due, in the middle of a drop
(0.3-2.6 s). See docs/console.md, "At size (measured)".

So a scenario view runs with the collector paused (:func:`collector_paused`), and the
request owes one full collection, run when Django reports the request finished (the
answer has been sent: ``request_finished``, :func:`collect_owed`). That collection walks
the evaluations kept (the baseline itself is frozen, out of its sight) and frees the one
just dropped from the cache at once, so memory stays flat from drop to drop.
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["collector_paused", "collect_owed", "owed"]

_lock = threading.Lock()
_owed = False  # a paused request's collection not run yet (process-wide, as the collector)


def owed() -> bool:
    """Whether a scenario request paused the collector and its collection has not run."""
    return _owed


def collector_paused(view: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``view`` with the cyclic collector paused until its request finishes.

    The collector stays paused after the view returns, while Django sends the answer: it
    resumes in :func:`collect_owed`. A view that raises resumes it at once (nothing young
    is kept worth sparing a walk for, and the error answer may not be this view's).
    """

    @functools.wraps(view)
    def paused(*args: Any, **kwargs: Any) -> Any:
        global _owed
        with _lock:
            _owed = True
        gc.disable()
        try:
            return view(*args, **kwargs)
        except BaseException:
            collect_owed()
            raise

    return paused


def collect_owed(**_signal: Any) -> None:
    """Run the collection a paused scenario request owes, then resume the collector (a
    ``request_finished`` receiver: any request's end settles it, so a request whose end
    is reported elsewhere, e.g. a client that went away, cannot leave it paused)."""
    global _owed
    with _lock:
        due, _owed = _owed, False
    if due:
        gc.collect()
        gc.enable()
