"""Pausing Python's cyclic garbage collector during a batch of engine work.

A settle allocates millions of small objects that live as long as the cluster state; each
full collection walks all of them, and a pass of the **templates-500** workload triggered
about seven, a third of its CPU time (docs/v1.md, "Speed"). The engine's objects form no
reference cycles worth collecting (a full collection after a settle frees none), so the
collector is paused while a batch runs and resumed after it; reference counting still
frees everything else at once.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic collector for the ``with`` block (nested blocks are fine: only the
    outermost resumes it).

    Returns:
        A context manager.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
