"""When the v1 claims' waits for binding conditions time out, kept between passes
(docs/v1.md, binding conditions; KEP-5007).

``V1Scheduling.next_wakeup`` asks for the first of them twice a worker pass; a walk of every
claim for it cost 0.07 to 0.09 CPU-s a kept pass at 5,000 nodes and 40,000 claims, where
almost no claim waits. :class:`Deadlines` keeps each waiting claim's deadline
(``v1_prebind.deadline``, which reads the claim alone) and looks again only at the claims
the state touched since its last look (``engine/touched_since.py``).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from allocation.engine.objects import ResourceClaimV1
from allocation.engine.scheduling import v1_prebind
from allocation.engine.touched_since import TouchedSince

if TYPE_CHECKING:
    from allocation.engine.objects import KObject, ObjectKey
    from allocation.engine.state import ClusterState

__all__ = ["Deadlines", "deadline_of"]


def deadline_of(claim: KObject | None) -> datetime | None:
    """When ``claim``'s wait times out: a v1 claim allocated, reserved and waiting for
    binding conditions (``v1_prebind.deadline``); None for anything else."""
    if not isinstance(claim, ResourceClaimV1) or claim.allocation is None \
            or not claim.reserved_for:
        return None
    return v1_prebind.deadline(claim)


class Deadlines:
    """The deadline of every claim that waits, by claim key."""

    def __init__(self) -> None:
        self._since = TouchedSince()
        self._due: dict[ObjectKey, datetime] = {}

    def earliest(self, state: ClusterState) -> datetime | None:
        """The first deadline still ahead of ``state``'s clock among its claims, or None
        when none is. One passed already needs no wakeup: Filter and PreBind read it at
        the time (a claim another pod holds keeps its passed deadline while it waits)."""
        keys = self._since.keys(state)
        if keys is None:  # another state (or the first): walk it
            self._due = {}
            keys = [claim.key for claim in state.of_kind(ResourceClaimV1)]
        due, objects = self._due, state.objects
        for key in keys:
            if key.kind != "ResourceClaim":
                continue
            when = deadline_of(objects.get(key))
            if when is None:
                due.pop(key, None)
            else:
                due[key] = when
        now = state.clock.now
        return min((when for when in due.values() if when > now), default=None)
