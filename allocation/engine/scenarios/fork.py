"""A scenario's cluster as a fork of the settled baseline, not a new simulation of it.

A console simulates its baseline once per stored revision; every change to a scenario used
to load and simulate all of the baseline's documents again (seconds at a thousand nodes).
Here the changed documents (those :func:`~allocation.engine.scenarios.changes.apply_changes`
replaced, added or removed: everything else it shares with the baseline) are loaded alone
and put into a ``ClusterState.fork()`` of the settled baseline, as the worker's kept state
takes what was written (``engine/changes.py``); the fork then settles with controllers that
remember what the baseline's found needing nothing (``Simulation.fork``), so it visits what
the changes touched. Forking costs milliseconds.

The fork answers only what a simulation of the changed documents would answer: every check
a whole-cluster load and build make is made again (those across objects on what changed,
``scenarios/checks.py``), and anything they would refuse makes :func:`fork_state` return
None, so the caller simulates the documents instead and reports the problem exactly as it
always did (docs/scenarios.md, "Evaluation, diff and undo").
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from allocation.engine.changes import apply_changes
from allocation.engine.manifests import InvalidManifests, load_documents
from allocation.engine.scenarios.checks import check_fork_input, fork_passes
from allocation.engine.simulation import Simulation

if TYPE_CHECKING:
    from allocation.engine.objects import ObjectKey
    from allocation.engine.scenarios.changes import Applied
    from allocation.engine.state import ClusterState

__all__ = ["fork_state"]

_at: WeakKeyDictionary[ClusterState, dict[str, dict[int, ObjectKey]]] = WeakKeyDictionary()


def fork_state(settled: Simulation, documents: Sequence[dict], applied: Applied,
               now: datetime, source: str = "scenario",
               base_source: str = "baseline",
               positions: Sequence[int] | None = None,
               warnings: list[str] | None = None) -> Simulation | None:
    """A simulation of a fork of ``settled``'s state with ``applied``'s changes, in
    ``applied``'s strategy, not yet settled (``Simulation.fork``: its controllers remember
    what ``settled``'s found quiet).

    ``settled`` must be the settled simulation of ``documents`` loaded as
    ``(base_source, document)`` pairs (objects know their document by position), at ``now``:
    positions 1, 2, ... or, given, ``positions`` (one per document, in order; a stored
    cluster's row positions have gaps); ``applied`` the result of applying the scenario's
    changes to ``documents``. The fork's objects are in the order a load of
    ``applied.documents`` would give them: a replaced object keeps its place, a new one
    goes last. ``warnings``, when given, gains what loading the changed documents warned
    of (``LoadResult.warnings``, each ``Problem.in_object``: the documents are numbered
    otherwise here than in a load of them all).

    Returns:
        The simulation, or None when a load or build of ``applied.documents`` would report
        a problem, or the fork cannot stand for it (the caller simulates the documents).
    """
    base_state = settled.state
    if base_state.clock.now != now:
        return None
    numbers = range(1, len(documents) + 1) if positions is None else positions
    if len(numbers) != len(documents):
        raise ValueError("one position per document")
    found = _delta(documents, applied)
    if found is None:
        return None  # one document twice: a duplicate
    fresh, gone_at = found
    at = _positions(base_state, base_source)
    removed: list[ObjectKey] = []
    for index in gone_at:
        if numbers[index] not in at:
            return None
        removed.append(at[numbers[index]])
    try:
        loaded = load_documents(((source, d) for d in fresh), profile=base_state.profile)
    except InvalidManifests:
        return None
    if loaded.events:
        return None  # an Event is history, not state
    if warnings is not None:
        warnings.extend(w.in_object for w in loaded.warnings)
    replaced = {obj.key for obj in loaded.objects}
    simulation = settled.fork(applied.strategy)
    fork = simulation.state
    problems = len(fork.problems)
    gone = [k for k in removed if k not in replaced or k in applied.moved]
    if not apply_changes(fork, gone, loaded.objects):
        return None
    check_fork_input(base_state, fork, loaded.objects, gone)
    if len(fork.problems) > problems or not fork_passes(base_state, fork, loaded.objects,
                                                         gone):
        return None
    return simulation


def _delta(documents: Sequence[dict], applied: Applied) -> tuple[list[dict], list[int]] | None:
    """(the documents of ``applied`` that are not ``documents``', in their order; the
    indexes of ``documents`` no longer among them), or None when one document is in
    ``applied`` twice.

    The edits' own account (``Applied.delta``) answers in what they touched; without it,
    both lists are scanned by identity (tens of thousands of documents on a large cluster).
    """
    delta = applied.delta
    if delta is not None and delta.of is documents:
        return delta.fresh, delta.gone
    base = {id(d) for d in documents}
    kept = {id(d) for d in applied.documents}
    if len(kept) != len(applied.documents):
        return None
    return ([d for d in applied.documents if id(d) not in base],
            [i for i, d in enumerate(documents) if id(d) not in kept])


def _positions(state: ClusterState, file: str) -> dict[int, ObjectKey]:
    """The key of each of ``state``'s objects loaded from ``file``, by document position;
    found once per settled state and file (a settled baseline is only ever forked, never
    changed: its forks copy what they change)."""
    found = _at.setdefault(state, {})
    if file not in found:
        found[file] = {obj.source.doc: key for key, obj in state.objects.items()
                       if obj.source is not None and obj.source.file == file}
    return found[file]
