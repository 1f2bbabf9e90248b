"""The keys a state touched since a reader last looked: what an index kept between rounds
and passes looks at again instead of walking every object of its kind.

Every change of an object goes through ``ClusterState.writable``, ``add`` or ``remove``,
which append its key to ``ClusterState.touched`` (``engine/quiet.py`` relies on the same
record). An index of some objects (the v1 claims a template made, the claims waiting for
binding conditions, the v1 allocator's book) reads the keys appended since its last look
and looks again at those objects only: a kept worker pass after one pod written touches a
handful of keys among 40,000 claims at 5,000 nodes (docs/console.md, "The kept state").

A state the reader has not seen (its first look, a fork, a new full pass) has no such
record for it: :meth:`TouchedSince.keys` answers None and the caller walks everything. The
worker's catch-up puts a new ``touched`` list in place at every kept pass, and a reader need
not look at every pass (the v1 book is synchronised only in passes with a v1 pod to
schedule): the new list is a :class:`TouchedLog` linked to the list it replaced, so a
reader reads the rest of the list it last read, every list put in place since, then the
current one; one that fell further behind than the links kept walks everything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from allocation.engine.objects import ObjectKey
    from allocation.engine.state import ClusterState

__all__ = ["TouchedSince", "TouchedLog"]


class TouchedLog(list):
    """A ``ClusterState.touched`` list put in place of another, with a link to it; only the
    last :attr:`LINKS` lists stay linked, so passes long gone are not kept alive."""

    __slots__ = ("before",)

    LINKS = 16

    def __init__(self, keys, before: list | None) -> None:
        super().__init__(keys)
        self.before = before
        log = self
        for _ in range(self.LINKS):  # cut the chain behind the last LINKS lists
            log = getattr(log, "before", None)
            if log is None:
                return
        if isinstance(log, TouchedLog):
            log.before = None


class TouchedSince:
    """Where one reader stands in a state's ``touched`` record."""

    def __init__(self) -> None:
        self._state: ClusterState | None = None
        self._touched: list | None = None
        self._read = 0

    @property
    def state(self) -> ClusterState | None:
        """The state of the last call, if any."""
        return self._state

    def behind(self, state: ClusterState) -> bool:
        """Whether ``state`` is another state than the last call's, or has put another
        ``touched`` list in place since (a new pass)."""
        return state is not self._state or state.touched is not self._touched

    def fork_for(self, fork: ClusterState) -> TouchedSince:
        """A reader of ``fork`` (just made by ``ClusterState.fork``, its ``touched`` empty)
        from the fork's start: for an index copied from one kept for the forked state."""
        twin = TouchedSince()
        twin._state, twin._touched, twin._read = fork, fork.touched, 0
        return twin

    def keys(self, state: ClusterState) -> list[ObjectKey] | None:
        """The keys ``state`` touched since the last call (repeats included, in order), or
        None when ``state`` is not the state of the last call, or its ``touched`` lists
        since are no longer all linked: the caller walks it whole. Either way the next
        call answers from now on."""
        touched = state.touched
        if state is self._state and touched is self._touched:
            keys = touched[self._read:]
        else:
            lists = self._lists_since(state)
            keys = None if lists is None else \
                [*self._touched[self._read:], *(key for log in lists for key in log)]
            self._state, self._touched = state, touched
        self._read = len(touched)
        return keys

    def _lists_since(self, state: ClusterState) -> list[list] | None:
        """The ``touched`` lists put in place since the one last read, oldest first, or
        None when it is not among the linked ones (or the state is another)."""
        if state is not self._state:
            return None
        lists, log = [], state.touched
        while log is not None and log is not self._touched:
            lists.append(log)
            log = getattr(log, "before", None)
        return lists[::-1] if log is not None else None
