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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

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

__all__ = ["KeptState", "NotIncremental", "changed_plan"]


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
