"""Evaluating scenarios against the stored baseline, with small in-process caches.

The baseline is the stored cluster as the worker holds it, settled
(``scenarios/baseline.py``): forked from the in-process worker's settled state or built
from the stored rows the first time a process needs it, then caught up from the change log
at each new revision, as the worker's kept state is. Its settle on a cluster the worker has
settled is one quiet round that leaves the controllers remembering what needs nothing, so a
scenario's fork settles only what its changes touch (docs/scenarios.md, "Evaluation, diff
and undo"). A scenario's evaluation is cached by (revision, changes), so rendering a page
right after a change costs nothing more. The engine does the work
(``allocation.engine.scenarios``): changes are applied copy-on-write to the baseline's
documents, and what they changed is put into a fork of the baseline's settled state
(``scenarios/fork.py``), never into the stored cluster.
"""

from __future__ import annotations

import gc
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence

from allocation.engine.scenarios import Evaluation, evaluate
from allocation.services import cluster
from allocation.services.store import STORED_FILE, stored_count
from scenarios.baseline import Baseline, build, caught_up, forked

__all__ = ["Baseline", "baseline", "evaluate_changes", "outcome_json", "clear_caches",
           "first_build_ahead", "PREPARE_FROM"]

_CACHE_SIZE = 4
_LARGE_CACHE_SIZE = 1
"""Evaluations kept of a baseline of :data:`_FREEZE_FROM` documents or more: each weighs
tens of MB there (30-45 at 5,000 nodes: the fork's indexes and memos), and while a drop
is evaluated the one it replaces still exists, so the web process holds one more than
this at its peak. One: the page's latest (the body its answer and its socket draw);
undoing a change evaluates the one before again, as a drop does (docs/scenarios.md,
"Evaluation, diff and undo")."""
_FREEZE_FROM = 5_000  # documents: a smaller baseline costs a full collection little
PREPARE_FROM = 5_000
"""Stored objects from which a process's first baseline (built from every row) takes long
enough that the scenario page shows that it is being prepared (:func:`first_build_ahead`):
about a second at 1,000 nodes, 6-10 s at 5,000."""
_YOUNG_WHILE_LARGE = 100_000
"""The cyclic collector's youngest-generation threshold while a large baseline is kept
(Python's is 700 allocations). A drop's evaluation is tens of MB of young containers (the
fork's copies of the baseline's indexes and memos) that every young collection walked
again while the drop went on (gen0 walks of 50-90 ms a drop at 5,000 nodes, gen1 of
50-250): what frees them is the evaluation being dropped from the cache, by reference
counting (:func:`_make_room`). Other requests' cyclic garbage is still collected, in
fewer, larger young collections (docs/console.md, "At size (measured)")."""
log = logging.getLogger(__name__)
_young_default = gc.get_threshold()[0]
_lock = threading.Lock()
_building = threading.Lock()  # one build at a time: a second would only repeat it
_baseline: Baseline | None = None
_quiet: Baseline | None = None  # the last quiet baseline, which the next is caught up from
_evaluations: OrderedDict[tuple, Evaluation] = OrderedDict()


def first_build_ahead() -> bool:
    """Whether this process has made no baseline yet (the next is built from every stored
    row) and the stored cluster has :data:`PREPARE_FROM` objects or more: a page that
    needs the baseline then answers at once with a placeholder that asks for the planner
    (docs/scenarios.md, "The baseline"), rather than nothing for seconds."""
    with _lock:
        if _baseline is not None or _quiet is not None:
            return False
    return stored_count() >= PREPARE_FROM


def baseline() -> Baseline:
    """The baseline at the current revision (made once per revision per process: one
    request makes it while the others wait for it). The first is a fork of the state this
    process's worker settled at that revision, when it has one, else built from every
    stored row; later ones are caught up from the last quiet one (``scenarios/baseline.py``)."""
    global _baseline, _quiet
    current = cluster.revision()
    with _lock:
        if _baseline is not None and _baseline.revision == current:
            return _baseline
    with _building:
        with _lock:
            if _baseline is not None and _baseline.revision == current:
                return _baseline  # made while this request waited
            old, _baseline = _baseline, None
            _evaluations.clear()  # forks of an older baseline: never asked for again
        started = time.process_time()
        quiet = _quiet
        made = caught_up(quiet) if quiet is not None else None
        del quiet
        if made is None:
            with _lock:
                _quiet = None
            large = old is not None and len(old.documents) >= _FREEZE_FROM
            del old
            if large:
                _free_frozen()
            made = forked(current) or build()
            if len(made.documents) >= _FREEZE_FROM:
                gc.freeze()
        else:
            del old
        with _lock:
            _baseline = made
            if made.quiet:
                _quiet = made
        _young_threshold(len(made.documents) >= _FREEZE_FROM)
    how = ("forked from the worker's state" if made.forked
           else "built" if made.caught_up is None
           else f"caught up ({made.caught_up} objects from the change log)")
    log.info("scenario baseline at revision %s %s in %.2f CPU-s%s", made.revision, how,
             time.process_time() - started, "" if made.quiet else " (not quiet)")
    return made


def _young_threshold(large: bool) -> None:
    """The collector's youngest-generation threshold for a baseline that is ``large`` or not
    (:data:`_YOUNG_WHILE_LARGE`)."""
    gc.set_threshold(_YOUNG_WHILE_LARGE if large else _young_default, *gc.get_threshold()[1:])


def _free_frozen() -> None:
    """Free the baseline just replaced: hand the objects frozen last time back to the
    cyclic garbage collector and collect once, before the new baseline exists, so the
    collection walks the old one only.

    A baseline is millions of long-lived objects; every full collection walked all of them
    (about a second at 1,000 nodes) at whatever moment it fell due, often in the middle of
    a drop. So a new baseline is frozen (``gc.freeze``: out of the collector's sight;
    reference counting still frees them), and its cycles are freed here when it is
    replaced, not kept for ever.
    """
    gc.unfreeze()
    gc.collect()


def evaluate_changes(changes: Sequence[dict]) -> tuple[Evaluation, Baseline]:
    """The scenario ``changes`` evaluated on the current baseline.

    Raises ``ChangeError`` or ``InvalidManifests`` when the changes cannot apply.
    """
    base = baseline()
    key = (base.revision, json.dumps(list(changes), sort_keys=True))
    with _lock:
        cached = _evaluations.get(key)
        if cached is not None:
            _evaluations.move_to_end(key)
            return cached, base
    large = len(base.documents) >= _FREEZE_FROM
    kept = _LARGE_CACHE_SIZE if large else _CACHE_SIZE
    if large:
        _make_room(kept)
    result = evaluate(base.documents, changes, baseline=base.outcome, now=base.now,
                      settled=base.simulation, base_source=STORED_FILE,
                      positions=base.positions, profile=base.simulation.state.profile,
                      index=base.index)
    with _lock:
        _evaluations[key] = result
        while len(_evaluations) > kept:
            _evaluations.popitem(last=False)
    return result, base


def _make_room(kept: int) -> None:
    """Drop a large baseline's oldest evaluations until one more fits in ``kept``, before
    the next is made, so that it reuses their memory.

    A dropped evaluation is freed by reference counting alone (its fork of the state names
    nothing that names it back: the inventory index's and the v1 request memo's
    back-references are weak), so no collection is run here: one walked everything not
    frozen, 20-50 ms of every drop at 5,000 nodes. A test drops an evaluation with the
    collector off and finds it gone.
    """
    with _lock:
        while len(_evaluations) >= kept:
            _evaluations.popitem(last=False)


def outcome_json(result: Evaluation) -> dict:
    """The part of an evaluation that is stored with the scenario (lists, the API)."""
    pods = result.outcome.pods
    scheduled = sum(map(bool, pods.values()))  # one pass in C: 40,000 pods at size
    return {"strategy": result.applied.strategy,
            "scheduled": scheduled,
            "pending": len(pods) - scheduled,
            "nodes": len(result.outcome.nodes),
            "diff": result.diff.to_dict(),
            "warnings": result.warnings}


def clear_caches() -> None:
    """Forget cached baselines and evaluations (tests; a restored database)."""
    global _baseline, _quiet
    with _lock:
        _baseline = _quiet = None
        _evaluations.clear()
    _young_threshold(False)
