"""One worker pass on the baseline: the engine loop of ``simulate`` on the stored cluster.

A pass reads a consistent snapshot (rows and revision; not the Events, which are not state),
runs every controller to a fixed point with the clock at the real time (timers already due
run too), and saves only the objects whose documents changed, plus the Events it recorded
folded into the stored series (``services/events.py``), in ONE transaction. A pass that
changes no object and only repeats stored Events saves nothing and makes no revision; it
still deletes Events older than the TTL. A pass that dies half-way leaves the state as
before. See ``docs/console.md``, "The worker" and "Events".

- **No object stops a pass.** A row that cannot be loaded is left out and reported; a
  controller's failure on one object is confined to it (``engine/faults.py``); an object
  that cannot be written back keeps its stored document (with the failure written into
  its metadata where possible) and the pass runs again with that object left alone from the
  start, so nothing is decided for it.
- **Writes during the pass do not discard it.** At the save, each object the pass changes
  must still be stored as the pass read it (its document is compared); objects changed
  meanwhile are left for the next pass (``conflicts``), the rest is saved, and the next
  pass starts at once (``complete`` is False). Only if the saved changes would make the
  stored cluster invalid is nothing saved (``stale``).
- **The lease.** ``checkpoint`` is called between the pass's steps and before every
  controller runs; it renews the lease, or raises :class:`PassAborted` when the lease was
  lost: the pass stops at once and saves nothing (``lost-lease``). ``holds_lease()`` is
  asked again inside the save transaction.
"""

from __future__ import annotations

import gc
import hashlib
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from allocation.engine.events import VirtualClock
from allocation.engine.faults import Failure, fallback_manifest, report
from allocation.engine.gcpause import paused_gc
from allocation.engine.objects import (
    KObject,
    ObjectKey,
    Source,
)
from allocation.engine.simulation import Simulation
from allocation.engine.state import ClusterState
from allocation.models import StoredObject, canonical_json
from allocation.services import read_model
from allocation.services.cluster import cluster_row, locked_cluster
from allocation.services.events import (
    fold_pass,
    next_prune,
    plan_events,
    prune_events,
    save_events,
)
from allocation.services.incremental import KeptState, NotIncremental, changed_plan
from allocation.services.rebase import not_about, rebase
from allocation.services.store import (
    STORED_FILE,
    Identity,
    LeftOut,
    build_state,
    identity_of,
    row_identity,
    stand_in,
    stored_rows,
)
from allocation.services.writes import Plan, apply_plan, commit_revision, plan_changes

__all__ = ["PassResult", "PassAborted", "KeptState", "reconcile", "SAVED", "UNCHANGED",
           "STALE", "LOST_LEASE"]

log = logging.getLogger(__name__)

SAVED, UNCHANGED, STALE, LOST_LEASE = "saved", "unchanged", "stale", "lost-lease"
_MAX_RUNS = 3  # a run, and up to two more with the objects that could not be written left alone


class PassAborted(Exception):
    """Raised by a pass's ``checkpoint`` to stop it at once (the worker lost its lease)."""


@dataclass
class PassResult:
    """How a pass ended, at which revision, what changed and when the next timer is due.

    ``complete`` is False when the stored cluster changed during the pass: what still applied
    was saved, ``conflicts`` lists the objects left for the next pass, which should start at
    once. ``next_wakeup`` is the controllers' next timer; ``next_prune`` when the oldest
    Event expires (the worker prunes then without a pass: ``services.events.prune``).
    ``failures`` are the one-line reports of objects (and controllers) that failed.
    """

    outcome: str
    revision: int
    kinds: list[str] = field(default_factory=list)
    rounds: int = 0
    next_wakeup: datetime | None = None
    next_prune: datetime | None = None  # when the oldest stored Event expires
    complete: bool = True
    conflicts: list[Identity] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    kept: KeptState | None = None
    """The settled state to continue from (``reconcile``'s ``kept``), or None: the next
    pass builds the whole cluster."""

    @property
    def again(self) -> bool:
        """Whether another pass should follow at once."""
        return self.outcome == STALE or (self.outcome in (SAVED, UNCHANGED)
                                         and not self.complete)


@dataclass
class _Work:
    """What a pass computed: the plan against the rows it read, and what it left out."""

    plan: Plan
    events: dict[str, dict]  # one per series by its hash, in the order each last happened
    rounds: int
    next_wakeup: datetime | None
    left_out: list[LeftOut]
    failures: list[str]
    state: ClusterState | None = None
    simulation: Simulation | None = None
    quarantined: bool = False  # an object could not be written back


def save_plan(cluster, plan: Plan) -> None:
    """Apply a pass's plan (separate so tests can make it fail half-way)."""
    apply_plan(cluster, plan)


_STABLE_LIMIT = 1_000_000
_stable: set[bytes] = set()
"""Digests of stored documents known to come back unchanged from an object loaded from
them and left alone: the fingerprints a pass keeps for the next one."""


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _documents(simulation: Simulation, rows: dict[Identity, StoredObject],
               quarantined: dict[ObjectKey, BaseException]
               ) -> tuple[list[tuple[KObject, str]], dict[ObjectKey, BaseException]]:
    """Every object's canonical document; objects whose document cannot be made are reported
    and keep their stored document, with the failure written into it if that can be done.

    Only what changed is serialised: an object no controller changed (not in
    ``state.changed``) whose stored document an earlier pass found to come back unchanged
    (``_stable``) keeps its stored document as it is. The text of an object the pass
    created (no row) or left alone is written from its shared manifest
    (``KObject.to_manifest(shared=True)``, as ``simulate``'s writer does): it is only read.
    A changed stored object is copied first as before, so a stored document too deep to
    copy still fails here and is kept (docs/console.md, "Failures").
    """
    state = simulation.state
    desired, failed = [], {}
    if len(_stable) > _STABLE_LIMIT:
        _stable.clear()
    for obj in state.all_objects():
        row = rows.get(identity_of(obj))
        untouched = row is not None and obj.key not in state.changed
        digest = _digest(row.document) if untouched else None
        if digest is not None and digest in _stable:
            desired.append((obj, row.document))
            continue
        try:
            # The engine's manifests are written by orjson as ``simulate``'s writer writes
            # them (``parsed``: they hold no Enum or UUID, only the input's values and the
            # engine's strings and numbers; allocation/engine/writer.py).
            document = canonical_json(obj.to_manifest(shared=row is None or untouched),
                                      parsed=True)
            desired.append((obj, document))
            if digest is not None and document == row.document:
                _stable.add(digest)
            continue
        except Exception as error:  # noqa: BLE001 - confined to the object
            failed[obj.key] = error
            if obj.key not in quarantined:
                report(state, obj, "writer", error)
            obj = state.objects[obj.key]
        try:
            desired.append((obj, canonical_json(fallback_manifest(obj))))
        except Exception:  # noqa: BLE001 - not even that: the stored document stays
            if row is not None:  # (a new object that cannot be written is not created)
                desired.append((obj, row.document))
    return desired, failed


def _compute(rows: list[StoredObject], strategy: str, now: datetime, checkpoint) -> _Work:
    by_identity = {row_identity(r): r for r in rows}
    quarantined: dict[ObjectKey, BaseException] = {}
    for run in range(_MAX_RUNS):
        state, left_out = build_state(rows, [], VirtualClock(now))  # Events are not state
        state.changed.clear()  # what the build itself touched is as stored
        checkpoint()
        simulation = Simulation.on(state, strategy, checkpoint)
        for item in left_out:
            report(state, stand_in(item.row), "loader", None,
                   f"the stored document cannot be loaded, so the planner leaves it out: "
                   f"{item.problem.path}: {item.problem.message}")
        for key, error in quarantined.items():  # left alone from the start (see _documents)
            if key in state.objects:
                report(state, state.objects[key], "writer", error)
        rounds = _settle(simulation)
        checkpoint()
        desired, failed = _documents(simulation, by_identity, quarantined)
        new = {k: e for k, e in failed.items() if k not in quarantined}
        if not new or run == _MAX_RUNS - 1:
            break
        quarantined.update(new)
    # Rows left out are not the pass's to change, nor to delete.
    out = {id(item.row) for item in left_out}
    plan = plan_changes([r for r in rows if id(r) not in out], desired, prune=True)
    failures = _failures(state, simulation)
    for item in left_out:
        log.warning("worker pass: left out %s", item.text)
    return _Work(plan, fold_pass(state.events.items), rounds, simulation.next_wakeup(),
                 left_out, failures, state, simulation, bool(quarantined or failed))


def _compute_kept(kept: KeptState, checkpoint) -> _Work:
    """The pass on the kept state (caught up already): settle, then write what changed."""
    state, simulation = kept.state, kept.simulation
    simulation.checkpoint = checkpoint
    checkpoint()
    rounds = _settle(simulation)
    checkpoint()
    plan = changed_plan(state)
    return _Work(plan, fold_pass(state.events.items), rounds, simulation.next_wakeup(), [],
                 _failures(state, simulation), state, simulation)


def _settle(simulation: Simulation) -> int:
    """Settle, then run the timers due by now (back-off, ValidUntilSeconds), if any: a
    settle with no timer due would only walk every object once more to change nothing."""
    rounds = simulation.settle()
    due = simulation.next_wakeup()
    if due is not None and due <= simulation.state.clock.now:
        simulation.advance(timedelta(0))
    return rounds


def _failures(state: ClusterState, simulation: Simulation) -> list[str]:
    failures = [f.text for f in state.failures.values() if isinstance(f, Failure)]
    failures += [f.text for f in simulation.failures]
    for failure in [*state.failures.values(), *simulation.failures]:
        if isinstance(failure, Failure) and failure.error is not None:
            log.warning("worker pass: %s", failure.text, exc_info=failure.error)
    return failures


def reconcile(holds_lease=None, now: datetime | None = None, strategy: str = "first-fit",
              checkpoint=None, kept: KeptState | None = None) -> PassResult:
    """Run one pass.

    Args:
        holds_lease: asked inside the save transaction; False saves nothing (``lost-lease``).
        checkpoint: called between steps; raises :class:`PassAborted` to stop the pass.
        kept: the state an earlier pass of this worker settled (``PassResult.kept``): the
            pass catches it up from the change log instead of building the whole cluster
            (``services/incremental.py``); it must not be used again, whatever happens.

    Returns:
        The :class:`PassResult`; its ``kept`` is the state to continue from, when the pass
        ended cleanly.
    """
    # A full pass allocates as much as ``simulate``, which pauses the cyclic collector
    # likewise: its full collections walked the growing state ten times at 1,000 nodes, a
    # fifth of the pass (engine/gcpause.py).
    with paused_gc():
        try:
            return _pass(holds_lease, now, strategy, checkpoint, kept)
        finally:
            _age_survivors()


def _age_survivors() -> None:
    """Count what the pass allocated and kept (the settled state, kept for the next pass)
    as old, before the collector resumes.

    While paused, the collector still tracks every new object in its youngest generation;
    the first collection after the pass would walk them all (a third of a second at 1,000
    nodes, 1.3 to 2 at 5,000), and the next older one again, to find nothing: they live
    as long as the state. ``gc.freeze`` then ``gc.unfreeze`` moves every tracked object to
    the oldest generation without walking it; cyclic garbage among them is still found
    by the next full collection, which runs on the collector's usual schedule. Not while
    objects are frozen already: the unfreeze would thaw them too (a scenario baseline is
    kept frozen, in whichever process evaluates scenarios: scenarios/evaluation.py).
    """
    if gc.get_freeze_count():
        return
    gc.freeze()
    gc.unfreeze()


def _pass(holds_lease, now: datetime | None, strategy: str, checkpoint,
          kept: KeptState | None) -> PassResult:
    now = now or timezone.now()
    tick = checkpoint or (lambda: None)
    rows = None
    with transaction.atomic():  # a consistent snapshot of rows and revision
        snapshot = cluster_row()
        version = (snapshot.revision, snapshot.token)
        if kept is not None:
            kept = _caught_up(kept, snapshot, now)
        if kept is None:
            rows = stored_rows()
    try:
        work = None
        if kept is not None:
            try:
                work = _compute_kept(kept, tick)
            except NotIncremental as why:
                log.info("worker pass: a full pass instead: %s", why)
                kept, rows = None, stored_rows()
        if work is None:
            work = _compute(rows, strategy, now, tick)
        tick()
    except PassAborted:
        return PassResult(LOST_LEASE, version[0])
    result = PassResult(UNCHANGED, version[0], work.plan.kinds, work.rounds, work.next_wakeup,
                        failures=work.failures)
    with transaction.atomic():
        cluster = locked_cluster()
        if holds_lease is not None and not holds_lease():
            result.outcome = LOST_LEASE
            return result
        plan, events = work.plan, work.events
        if (cluster.revision, cluster.token) != version:  # written to during the pass
            result.complete = False
            plan, result.conflicts = rebase(cluster, plan, work.left_out, now)
            if plan is None:
                result.outcome, result.revision = STALE, cluster.revision
                return result
            events = not_about(events, result.conflicts)
            result.kinds = plan.kinds
        prune_events(now)
        changes = plan_events(events)
        saved = bool(plan or changes.news)
        if saved:
            _placed_in_order(cluster, plan)
            save_plan(cluster, plan)
            save_events(cluster, changes, now)
            kinds = sorted({*plan.kinds, "Event"} if changes else plan.kinds)
            result.kinds = kinds
            result.revision = commit_revision(cluster, kinds)
            result.outcome = SAVED
        else:  # nothing but repeats: no revision (docs/console.md, "Events")
            result.revision = cluster.revision
        # The pages' rows, in the same transaction; a revision of their own only when rows
        # really changed and nothing else was saved (docs/console-pages.md, "The read model").
        alone, known = read_model.record(
            cluster, work.state, saved, kept.read_model if kept is not None else None,
            work.state.touched if kept is not None else None)
        if alone:
            result.revision = cluster.revision
        if result.complete and cluster.reconciled_revision != cluster.revision:
            cluster.reconciled_revision = cluster.revision
            cluster.save(update_fields=["reconciled_revision"])
        result.next_prune = next_prune()
        if result.complete and not work.left_out and not work.quarantined:
            # nothing was written during the pass: the state is what is stored now
            result.kept = KeptState(work.state, work.simulation, result.revision, known)
    if result.kept is not None:  # saved and announced: off the next write's path
        try:
            result.kept.simulation.warm()
        except Exception:  # noqa: BLE001 - the pass is saved; the next one starts afresh
            log.exception("worker pass: warming the kept state failed; the next pass "
                          "builds the whole cluster")
            result.kept = None
    return result


def _placed_in_order(cluster, plan: Plan) -> None:
    """Give the objects the plan creates the document positions their rows get
    (``writes.apply_plan`` hands them out in the plan's order), as objects loaded from rows
    have theirs: the read model orders by them, a later catch-up compares them."""
    for offset, (obj, _document) in enumerate(plan.create):
        obj.source = Source(STORED_FILE, cluster.next_position + offset)


def _caught_up(kept: KeptState, snapshot, now: datetime) -> KeptState | None:
    try:
        kept.catch_up(snapshot, now)
    except NotIncremental as why:
        log.info("worker pass: a full pass: %s", why)
        return None
    return kept

