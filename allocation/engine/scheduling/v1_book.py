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
from allocation.engine.touched_since import TouchedSince
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
        self.version = 0
        """Moves whenever the book changes (a commit, a release, a sync that changed it, a
        new allocator): what a cached answer read of the book is the same while it stands
        (a release and a commit leave ``committed`` as long as before)."""
        self.class_docs: list[dict] = []
        self._source: tuple = ()
        self._synced = False
        # the claims touched since the last sync (engine/touched_since.py)
        self._since = TouchedSince()

    def begin(self) -> None:
        """A new scheduler pass: synchronise again before the first v1 pod."""
        self._synced = False

    @property
    def synced(self) -> Allocator | None:
        """The allocator :meth:`ready` gives now without a look at the state (synchronised
        in this pass), else None."""
        return self.allocator if self._synced else None

    def ready(self, state: ClusterState, profile: Profile) -> Allocator:
        """The allocator for the state's slices and classes under ``profile``, its book in
        step with the claims' allocations (input allocations included).

        Returns:
            The allocator, rebuilt when the slices, classes or profile changed.
        """
        if self._synced and self.allocator is not None:
            return self.allocator
        source, classes = _source(state)
        if self.allocator is None or source != self._source:
            self.class_docs = [c.as_v1() for c in classes]
            # the slices' index kept with the state (built with it, shared with forks)
            self.allocator = Allocator(profile, classes=self.class_docs,
                                       index=v1_pools.slice_index(state, profile))
            self._source, self.committed, self._synced = source, {}, False
            self.version += 1
            self._since = TouchedSince()  # a new book: every claim is synchronised
        if not self._synced:
            keys = self._since.keys(state)
            if keys is None:
                self._sync(state, self.allocator)
            else:
                self._sync_touched(state, self.allocator, keys)
            self._synced = True
        return self.allocator

    def fork_for(self, fork: ClusterState) -> AllocatorSource:
        """This source for ``fork``, just made by ``ClusterState.fork`` of the state this
        one last synchronised with (``Simulation.fork``): first brought in step with that
        state (the claims it touched since), then its allocator's book copied, not made
        again from every claim of the fork (0.1 CPU-s at 40,000 claims: most of a v1
        scenario drop's settle); the copy reads the fork's touched keys from its start. A
        new source, made in full at its first look, when this one cannot tell what its
        state touched or was built for other slices, classes or profile."""
        twin = AllocatorSource()
        parent = self._since.state
        if self.allocator is None or parent is None or _source(parent)[0] != self._source:
            return twin
        keys = self._since.keys(parent)
        if keys is None:
            return twin
        self._sync_touched(parent, self.allocator, keys)
        allocator = self.allocator
        twin.allocator = Allocator(allocator.profile, classes=self.class_docs,
                                   book=allocator.book.copy(), index=allocator.index)
        twin.class_docs, twin.committed = self.class_docs, dict(self.committed)
        twin._source = _source(fork)[0]
        twin._since = self._since.fork_for(fork)
        return twin

    def commit(self, ref: str, allocation: dict) -> None:
        """Book a claim's new allocation (the allocator must be ready)."""
        self.allocator.book.commit(ref, allocation)
        self.committed[ref] = allocation
        self.version += 1

    def release(self, ref: str) -> None:
        """Take a claim's allocation out of the book, if the book holds one."""
        if self.allocator is not None and ref in self.committed:
            self.allocator.book.release(ref)
            del self.committed[ref]
            self.version += 1

    def _sync(self, state: ClusterState, allocator: Allocator) -> None:
        """Book every claim's allocation, release what the book holds and no claim does."""
        current = {claim.ref: claim.allocation for claim in state.of_kind(ResourceClaimV1)
                   if claim.allocation is not None}
        for key in [k for k, a in self.committed.items()
                    if current.get(k) is not a and (current.get(k) is None or current[k] != a)]:
            allocator.book.release(key)  # released or replaced
            del self.committed[key]
            self.version += 1
        for key, allocation in current.items():
            if key not in self.committed:
                allocator.book.commit(key, allocation)
                self.committed[key] = allocation
                self.version += 1

    def _sync_touched(self, state: ClusterState, allocator: Allocator, keys: list) -> None:
        """:meth:`_sync` for the claims at the keys touched since the last sync, the others
        being as the book holds them: walking all 40,000 claims of a kept pass at 5,000
        nodes cost 0.06 to 0.09 CPU-s (docs/console.md, "The kept state"). Releases come
        first, then the new allocations are booked in document order, as :meth:`_sync`
        does."""
        objects, committed = state.objects, self.committed
        fresh = []
        for key in {k for k in keys if k.kind == "ResourceClaim"}:
            claim = objects.get(key)
            ref = key.ref
            held = committed.get(ref)
            now = claim.allocation if isinstance(claim, ResourceClaimV1) else None
            if held is not None and held is not now and (now is None or now != held):
                allocator.book.release(ref)  # released or replaced
                del committed[ref]
                self.version += 1
            if now is not None and ref not in committed:
                fresh.append(key)
        for key in state.in_order(fresh):
            claim = objects[key]
            allocator.book.commit(claim.ref, claim.allocation)
            committed[claim.ref] = claim.allocation
            self.version += 1


def _source(state: ClusterState) -> tuple[tuple, list]:
    """What an allocator is built for: the state, its profile, slices and classes (by
    identity: a changed object is another one), and the classes."""
    slices = list(state.of_kind(ResourceSlice))
    classes = list(state.of_kind(DeviceClass))
    return ((id(state), id(state.profile), *(id(o) for o in slices), None,
             *(id(o) for o in classes)), classes)
