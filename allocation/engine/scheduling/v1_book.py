"""The v1 scheduler's allocator: built over the state's slices and classes, its book kept
in step with the claims' allocations (docs/v1.md, "Simulating v1").

A scheduler pass changes neither slices nor classes, so the allocator is looked at once
per pass (``begin``); it is rebuilt only when the slices, classes or profile objects are
others. Within a pass the scheduler commits and releases through this object, so the
record of what the book holds (``committed``) is always the book's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from allocation.engine import v1_pools
from allocation.engine.objects import DeviceClass, ResourceClaimV1, ResourceSlice
from allocation.engine.v1 import Allocator

if TYPE_CHECKING:
    from allocation.engine.state import ClusterState
    from allocation.engine.v1 import Profile

__all__ = ["AllocatorSource"]


class AllocatorSource:
    """One allocator per set of slices and classes, synchronised with the claims."""

    def __init__(self) -> None:
        self.allocator: Allocator | None = None
        self.committed: dict[str, dict] = {}
        """Claim ref -> the allocation the book holds for it."""
        self.class_docs: list[dict] = []
        self._source: tuple = ()
        self._synced = False

    def begin(self) -> None:
        """A new scheduler pass: synchronise again before the first v1 pod."""
        self._synced = False

    def ready(self, state: ClusterState, profile: Profile) -> Allocator:
        """The allocator for the state's slices and classes under ``profile``, its book in
        step with the claims' allocations (input allocations included).

        Returns:
            The allocator, rebuilt when the slices, classes or profile changed.
        """
        if self._synced and self.allocator is not None:
            return self.allocator
        slices = list(state.of_kind(ResourceSlice))
        classes = list(state.of_kind(DeviceClass))
        source = (id(state), id(state.profile), *(id(o) for o in slices), None,
                  *(id(o) for o in classes))
        if self.allocator is None or source != self._source:
            self.class_docs = [c.as_v1() for c in classes]
            # the slices' index kept with the state (built with it, shared with forks)
            self.allocator = Allocator(profile, classes=self.class_docs,
                                       index=v1_pools.slice_index(state, profile))
            self._source, self.committed, self._synced = source, {}, False
        if not self._synced:
            self._sync(state, self.allocator)
            self._synced = True
        return self.allocator

    def commit(self, ref: str, allocation: dict) -> None:
        """Book a claim's new allocation (the allocator must be ready)."""
        self.allocator.book.commit(ref, allocation)
        self.committed[ref] = allocation

    def release(self, ref: str) -> None:
        """Take a claim's allocation out of the book, if the book holds one."""
        if self.allocator is not None and ref in self.committed:
            self.allocator.book.release(ref)
            del self.committed[ref]

    def _sync(self, state: ClusterState, allocator: Allocator) -> None:
        current = {claim.ref: claim.allocation for claim in state.of_kind(ResourceClaimV1)
                   if claim.allocation is not None}
        for key in [k for k, a in self.committed.items()
                    if current.get(k) is not a and (current.get(k) is None or current[k] != a)]:
            allocator.book.release(key)  # released or replaced
            del self.committed[key]
        for key, allocation in current.items():
            if key not in self.committed:
                allocator.book.commit(key, allocation)
                self.committed[key] = allocation
