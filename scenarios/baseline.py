"""The stored cluster as scenarios start from it: forked from the in-process worker's state
or built from the stored rows once per process, then caught up from the change log as the
worker's kept state is.

A :class:`Baseline` is the stored cluster at one revision, settled: its documents, their
index, the settled simulation every scenario's fork starts from, and its outcome. The first
one a process needs is a fork of the state its in-process worker settled at that revision
(:func:`forked`), when it has one; else it is built from every stored row (:func:`build`:
seconds at 5,000 nodes). After that, a new revision is caught up (:func:`caught_up`): a
fork of the last *quiet* baseline takes the rows written since, as the worker's kept state
takes them (``allocation.services.incremental``), and settles what they touched, so a write
costs a scenario what it changed, not a rebuild (docs/scenarios.md, "The baseline").

Only a quiet baseline is caught up from: one whose settle changed nothing the worker would
write, so that its state *is* the stored cluster at its revision, as the worker's kept
state is after its pass. A baseline whose settle placed something (a pod written a moment
ago that the worker has not placed yet) differs from its rows; the next revision (the
worker's pass) is caught up from the quiet one before it.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from datetime import datetime
from operator import itemgetter

from django.db import transaction
from django.utils import timezone

from allocation.engine.events import VirtualClock
from allocation.engine.gcpause import paused_gc
from allocation.engine.objects import ObjectKey
from allocation.engine.scenarios import Outcome, summarize
from allocation.engine.scenarios.checks import base_passes, carried_passes
from allocation.engine.scenarios.documents import DocumentIndex, key_of
from allocation.engine.simulation import Simulation
from allocation.services import cluster
from allocation.services.incremental import (
    KeptState,
    NotIncremental,
    changed_plan,
    fork_shared,
)
from allocation.services.store import STORED_FILE, build_state, state_rows

__all__ = ["Baseline", "build", "caught_up", "forked"]

_READS = 3  # tries at reading the rows between two equal revisions (_rows_at_one_revision)


@dataclass
class Baseline:
    """The stored cluster at one revision: its documents, simulation and outcome."""

    revision: int
    documents: list[dict]
    """The stored documents of the state's objects, in document order (a row that cannot
    be loaded is left out, as the worker leaves it out)."""
    positions: list[int]
    """Each document's stored position (its objects' ``source.doc``)."""
    index: DocumentIndex
    """The documents by key, which every evaluation starts from."""
    simulation: Simulation
    outcome: Outcome
    now: datetime
    quiet: bool = False
    """Its settle changed nothing the worker would write: its state is the stored cluster
    at ``revision`` as stored, so later revisions can be caught up from it."""
    caught_up: int | None = None
    """How many objects the catch-up that made it put in or took out; None: built from
    every row, or forked from the worker's state."""
    forked: bool = False
    """Made from a fork of the state this process's worker settled (:func:`forked`)."""


def build() -> Baseline:
    """The baseline of the stored cluster now, from every stored row."""
    # an allocation-heavy batch (gcpause.py): 90,000 rows at the large size, then their state
    with paused_gc():
        current, rows = _rows_at_one_revision()
        now = timezone.now()
        # Events are history, not state: a scenario starts from the objects (this also
        # keeps thousands of old Events out of every evaluation).
        # kept as long as the revision is current: its documents' equal parts shared
        state, _left_out = build_state(rows, [], VirtualClock(now), shared_parts=True)
        del rows
        state.changed.clear()  # what the build itself touched is as stored (as the worker)
        stored = [obj for obj in state.objects.values()
                  if obj.source is not None and obj.source.file == STORED_FILE]
        documents = [obj.raw for obj in stored]  # before the settle replaces any object
        positions = [obj.source.doc for obj in stored]
        keys = [obj.key for obj in stored]
        return _settled(current, documents, positions, Simulation.on(state), now, None, keys)


def forked(revision: int) -> Baseline | None:
    """The baseline at ``revision`` from a copy-on-write fork of the state this process's
    worker settled and stored at that revision (``incremental.fork_shared``), or None: no
    worker here, nothing kept at that revision, or a pass running (the caller builds).

    The fork is what a build from the stored rows makes (the worker's kept state is its
    rows as stored, docs/console.md "The kept state"), without reading or loading a row:
    each object's document is its ``to_manifest()``, which is its stored row's. Its
    controllers remember what needs nothing, so its settle is one quiet round, and its
    objects are the worker's until either side changes one (docs/scenarios.md,
    "The baseline").
    """
    with paused_gc():
        simulation = fork_shared(revision)
        if simulation is None:
            return None
        state = simulation.state
        state.clock.advance_to(timezone.now())  # settled now, as a build is
        now = state.clock.now
        state.events.items = []  # the worker's pass's Events: history, not state (as a build)
        stored = sorted((obj for obj in state.objects.values()
                         if obj.source is not None and obj.source.file == STORED_FILE),
                        key=_stored_position)
        # shared: the documents are only read (a change copies the one it edits,
        # engine/scenarios/documents.py)
        documents = [obj.to_manifest(shared=True) for obj in stored]
        positions = [obj.source.doc for obj in stored]
        made = _settled(revision, documents, positions, simulation, now, None,
                        [obj.key for obj in stored])
        made.forked = True
        return made


def _stored_position(obj) -> int:
    return obj.source.doc


def _rows_at_one_revision() -> tuple[int, list]:
    """(revision, every stored row at it), read without holding a write lock: the rows are
    at that revision when no write committed between the two reads of it (every write
    commits a new revision with its rows). On SQLite a transaction takes the write lock
    when it begins (console/env.py), so reading 90,000 rows in one held every writer off
    for a second; on PostgreSQL a transaction at READ COMMITTED does not make several
    queries one snapshot, and the two reads do. A cluster written to all the while is read
    in one transaction after a few tries."""
    for _attempt in range(_READS):
        before = cluster.revision()
        rows = state_rows()
        if cluster.revision() == before:
            return before, rows
    with transaction.atomic():
        return cluster.revision(), state_rows()


def caught_up(quiet: Baseline) -> Baseline | None:
    """The baseline at the stored revision now, made from ``quiet`` (a quiet baseline) and
    the rows written since; None when the change log cannot serve it (the caller builds).
    ``quiet`` is not changed: the catch-up works on a fork of its simulation."""
    with paused_gc():
        simulation = quiet.simulation.fork()
        kept = KeptState(simulation.state, simulation, quiet.revision)
        now = timezone.now()
        try:
            with transaction.atomic():  # the revision and the rows it names belong together
                kept.catch_up(cluster.cluster_row(), now)
        except NotIncremental:
            return None
        state = simulation.state
        documents, positions, keys = _documents(quiet, state)
        return _settled(kept.revision, documents, positions, simulation, now,
                        kept.caught_up, keys, quiet)


def _documents(quiet: Baseline, state) -> tuple[list[dict], list[int], list[ObjectKey]]:
    """The stored documents, positions and keys of ``state`` just caught up from ``quiet``:
    the quiet baseline's, less those of the objects the catch-up replaced or removed
    (``state.changed``), with the new rows' documents in their places (before the settle
    replaces any object). Positions ascend, so each is found by bisection: a catch-up
    costs what it changed, not a walk of every document."""
    index = quiet.index
    keys = list(index.order) if not index.shadowed else [key_of(d) for d in quiet.documents]
    documents, positions = list(quiet.documents), list(quiet.positions)
    before = quiet.simulation.state.objects
    for at in sorted({_stored_at(before.get(key)) for key in state.changed} - {None},
                     reverse=True):
        i = bisect_left(positions, at)
        if i < len(positions) and positions[i] == at:
            del documents[i], positions[i], keys[i]
    fresh = sorted(((at, key, obj.raw) for key in state.changed
                    if (at := _stored_at(obj := state.objects.get(key))) is not None),
                   key=itemgetter(0))
    for at, key, document in fresh:
        i = bisect_left(positions, at)
        documents.insert(i, document)
        positions.insert(i, at)
        keys.insert(i, key)
    return documents, positions, keys


def _stored_at(obj) -> int | None:
    """The stored position of ``obj`` when it comes from a stored row, else None."""
    if obj is None or obj.source is None or obj.source.file != STORED_FILE:
        return None
    return obj.source.doc


def _settled(revision: int, documents: list[dict], positions: list[int],
             simulation: Simulation, now: datetime, caught: int | None,
             keys: list[ObjectKey], quiet: Baseline | None = None) -> Baseline:
    """Settle ``simulation`` (the stored cluster at ``revision``, built, or caught up from
    ``quiet``) and make its baseline, finding whether it is quiet. A caught-up one's
    summary and whole-cluster checks are the quiet one's with what differs made again."""
    simulation.settle()
    state = simulation.state
    if quiet is None:
        outcome = summarize(state)
        base_passes(state)  # here, not in the first drop (scenarios/checks.py)
    else:
        before = quiet.simulation.state
        outcome = summarize(state, quiet.outcome, state.changed, before)
        carried_passes(before, state)
    return Baseline(revision, documents, positions, DocumentIndex(documents, keys),
                    simulation, outcome, now, _quiet(state, revision), caught)


def _quiet(state, revision: int) -> bool:
    """Whether the settle of ``state`` (the stored cluster at ``revision``) changed nothing
    the worker would write: the worker's own test of a pass that changes nothing
    (``incremental.changed_plan``), on the rows as they are now, which are the rows at
    ``revision`` when no write came since."""
    try:
        plan = changed_plan(state)
    except NotIncremental:
        return False
    return not plan and cluster.revision() == revision

