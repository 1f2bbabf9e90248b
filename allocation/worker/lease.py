"""The database lease that lets one worker at a time reconcile the baseline.

The lease row is written by ``allocation.services.lease`` (:func:`acquire`, :func:`confirm`,
:func:`release`; re-exported here for the worker and its command); a worker that dies simply
stops renewing and the lease expires.

A pass may last longer than the lease: :class:`Keeper` renews it at the pass's checkpoints
(between steps and before every controller runs, a third of the lease at most apart) and
stops the pass at once when it was lost; :meth:`Keeper.confirm` renews it once more inside
the save transaction, only if it is still ours (``docs/console.md``, "Lease").
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

from allocation.services.lease import BASELINE, acquire, confirm, holds, release
from allocation.services.reconcile import PassAborted

__all__ = ["BASELINE", "acquire", "holds", "release", "confirm", "Keeper", "LeaseLost"]


class LeaseLost(PassAborted):
    """Another worker took the lease: the pass stops at once and saves nothing."""


class Keeper:
    """The lease of one worker: taken before a pass, renewed at the pass's checkpoints.

    ``clock`` (seconds, monotonic) decides when a renewal is due: a third of the lease
    after the last one, so a lease is renewed long before it expires while a pass with many
    checkpoints does not write the lease row at every one.
    """

    def __init__(self, holder: str, ttl: timedelta, name: str = BASELINE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.holder, self.ttl, self.name = holder, ttl, name
        self._clock = clock
        self._renewed: float | None = None

    def take(self) -> bool:
        """Take or renew the lease; False if another worker holds it."""
        taken = acquire(self.holder, self.ttl, self.name)
        self._renewed = self._clock() if taken else None
        return taken

    def checkpoint(self) -> None:
        """Renew the lease if a renewal is due.

        Raises:
            LeaseLost: the lease is no longer ours.
        """
        due = self._renewed is None or (
            self._clock() - self._renewed >= self.ttl.total_seconds() / 3)
        if due and not self.take():
            raise LeaseLost(f"worker {self.holder} lost the lease {self.name!r}")

    def confirm(self) -> bool:
        """Inside the save transaction: whether the lease is still ours (renewing it)."""
        confirmed = confirm(self.holder, self.ttl, self.name)
        if confirmed:
            self._renewed = self._clock()
        return confirmed
