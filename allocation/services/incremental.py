"""The worker's settled state, kept between passes and brought up to date from the change
log (docs/console.md, "The worker").

A full pass reads every stored row, builds the cluster state and settles it. When it ends
cleanly (complete, nothing left out, every object written back), the worker keeps that
state, its controllers (with their memory) and the revision it started from as a
:class:`KeptState`. The next pass reads only the change log since that revision and the rows
it names (:meth:`KeptState.catch_up`), puts the new documents into the state as a rebuild
would have them (``engine/changes.apply_changes``), settles, and serialises only the objects
the pass changed (:func:`changed_plan`). Anything unusual (the log pruned, a row that cannot
be loaded, a change a rebuild would refuse, writes during the pass, an object that cannot be
written) drops the kept state: the next pass is a full one again.

A worker keeps that state in a :class:`KeptSlot`. The in-process worker shares its slot
with the rest of its process (:func:`share`), so scenarios start from a copy-on-write fork
of the state the worker settled (:func:`fork_shared`) rather than building the cluster a
second time from every stored row (docs/scenarios.md, "The baseline").
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from allocation.engine.changes import apply_changes
from allocation.engine.objects import KObject, ObjectKey
from allocation.engine.simulation import Simulation
from allocation.engine.state import ClusterState
from allocation.engine.touched_since import TouchedLog
from allocation.models import Cluster, canonical_json
from allocation.services import changes
from allocation.services.read_model import Known
from allocation.services.store import (
    Identity,
    LeftOut,
    identity_of,
    load_row,
    row_identity,
)
from allocation.services.touched import rows_of
from allocation.services.writes import Plan, plan_changes

if TYPE_CHECKING:
    from allocation.services.reconcile import PassResult

__all__ = ["KeptState", "KeptSlot", "NotIncremental", "changed_plan", "share",
           "unshare", "fork_shared"]


class NotIncremental(Exception):
    """The kept state cannot serve this pass: the worker runs a full one instead."""


@dataclass
class KeptState:
    """A settled state and what the next pass needs to continue from it."""

    state: ClusterState
    simulation: Simulation
    revision: int
    """The stored revision the state is (writes after it are caught up): the revision its
    pass ended at, its own writes included, as nothing else wrote meanwhile."""
    read_model: Known | None = None
    """The read-model rows the pass that settled ``state`` wrote (``read_model.sync``)."""
    caught_up: int = field(default=0)
    """How many objects the last catch-up put into the state (for logs and benchmarks)."""

    def catch_up(self, cluster: Cluster, now: datetime) -> None:
        """Put every object written after ``revision`` up to ``cluster.revision`` into the
        state, as a rebuild from the stored rows would have it, and move the clock to
        ``now``; then clear what the state records per pass (changed keys, Events, failed
        objects).

        Raises:
            NotIncremental: the log no longer reaches back that far, a row cannot be
                loaded, or a rebuild would refuse the changed cluster.
        """
        written = changes.since(self.revision, cluster.revision, cluster.changes_from)
        if written is None:
            raise NotIncremental("the change log does not reach back to the kept state")
        written = {i for i in written if i[1] != "Event"}  # Events are not state
        rows = {row_identity(r): r for r in rows_of(written)}
        state = self.state
        gone: list[ObjectKey] = []
        fresh: list[tuple[int, KObject]] = []
        for ident in sorted(written):
            key = _key(ident)
            old = state.objects.get(key)
            row = rows.get(ident)
            if row is None:
                if old is not None:
                    gone.append(key)
                continue
            obj = load_row(row)
            if isinstance(obj, LeftOut):
                raise NotIncremental(f"a changed row cannot be loaded: {obj.text}")
            if old is not None and old.source is not None and old.source.doc != row.position:
                gone.append(key)  # deleted and created again: it goes last, as stored
            fresh.append((row.position, obj))
        fresh.sort(key=lambda item: item[0])
        if not apply_changes(state, gone, [obj for _position, obj in fresh]):
            raise NotIncremental("a rebuild would refuse the changed cluster")
        self.caught_up = len(fresh) + len(gone)
        state.clock.advance_to(now)
        # a new set (what watches it starts afresh: engine/quiet.py) holding what others
        # wrote: the documents are written back normalised if they differ, as a full pass
        # writes every object it loaded (changed_plan compares them); the keys of deleted
        # objects too (their rows are gone already)
        state.changed = {obj.key for _position, obj in fresh} | set(gone)
        # linked to the list it replaces: readers that did not look during the pass read
        # the rest of it too (engine/touched_since.py)
        state.touched = TouchedLog(state.changed, state.touched)
        state.events.items = []
        state.failures.clear()
        self.simulation.failures.clear()
        for controller in self.simulation.controllers:  # what each tells once per pass
            begin = getattr(controller, "begin_pass", None)
            if begin is not None:
                begin()
        self.revision = cluster.revision


class KeptSlot:
    """Where a worker keeps its state between passes, and where the other threads of its
    process may fork it.

    A pass changes the kept state in place, so the state is taken out for the pass and
    the next one put back under a lock (:meth:`run_pass`), and a fork is made only between
    passes (:meth:`fork_at`): a reader never waits for a pass, it builds instead.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: KeptState | None = None

    def run_pass(self, run: Callable[[KeptState | None], PassResult]) -> PassResult:
        """``run(kept)`` (a pass continuing from the kept state, or None: a full pass), whose
        result's ``kept`` is kept for the next pass.

        Returns:
            What ``run`` returned.
        """
        with self._lock:
            kept, self._kept = self._kept, None  # a pass that raises leaves nothing half-used
            result = run(kept)
            self._kept = result.kept
            return result

    def drop(self) -> None:
        """Forget the kept state (another worker reconciles: what this one's controllers
        remember is not for the state that one writes)."""
        with self._lock:
            self._kept = None

    def fork_at(self, revision: int) -> Simulation | None:
        """A fork of the kept simulation (``Simulation.fork``: copy-on-write, its
        controllers remembering what needs nothing) when the kept state is the stored
        cluster at ``revision`` and no pass runs; else None.

        The kept state is the stored cluster as stored: its pass was complete and wrote
        every object whose document differs from its row (:func:`changed_plan`), so each
        object's ``to_manifest()`` is its stored document. The fork is the caller's alone:
        the worker's next pass changes its own copies.
        """
        if not self._lock.acquire(blocking=False):
            return None
        try:
            kept = self._kept
            if kept is None or kept.revision != revision:
                return None
            return kept.simulation.fork()
        finally:
            self._lock.release()


_shared: KeptSlot | None = None


def share(slot: KeptSlot) -> None:
    """Offer ``slot`` (the in-process worker's) to this process's readers."""
    global _shared
    _shared = slot


def unshare(slot: KeptSlot) -> None:
    """Withdraw ``slot``, if it is the one offered (its worker stops)."""
    global _shared
    if _shared is slot:
        _shared = None


def fork_shared(revision: int) -> Simulation | None:
    """A fork of the shared worker's kept state at ``revision`` (:meth:`KeptSlot.fork_at`),
    or None: no worker in this process, nothing kept at that revision, or a pass running."""
    slot = _shared
    return None if slot is None else slot.fork_at(revision)


def _key(ident: Identity) -> ObjectKey:
    _group, kind, namespace, name = ident
    return ObjectKey(kind, namespace or None, name)


def changed_plan(state: ClusterState) -> Plan:
    """The rows to write for what the pass changed (``state.changed``): the objects still
    there whose documents differ from their rows, and the rows of the objects removed.

    Raises:
        NotIncremental: an object cannot be written (the full pass reports it).
    """
    changed = state.changed
    desired: list[tuple[KObject, str]] = []
    for key in state.in_order(changed):  # new rows take positions so
        obj = state.objects[key]
        try:
            desired.append((obj, canonical_json(obj.to_manifest())))
        except Exception as error:  # noqa: BLE001 - the full pass confines and reports it
            raise NotIncremental(f"{obj.key} cannot be written: {error}") from error
    doomed = {("", key.kind, key.namespace or "", key.name) for key in changed
              if key not in state.objects}
    rows = rows_of([*(identity_of(o) for o, _d in desired), *doomed])
    return plan_changes(rows, desired, deletes=doomed)
