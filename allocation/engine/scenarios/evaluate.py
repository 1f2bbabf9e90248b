"""Evaluating a what-if scenario: the baseline's documents, the changes, a simulation.

:func:`evaluate` applies a scenario's changes to the baseline's documents (copy-on-write,
so the baseline is never touched), simulates the result to a fixed point with the
scenario's strategy, and compares it with the baseline's outcome. A change that cannot be
honoured (a pod pinned to a node that cannot take it) is reported with the engine's own
explanation, so a console can refuse the drop on the spot.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from allocation.engine.constants import EXPLAIN_ANNOTATION
from allocation.engine.events import DEFAULT_START
from allocation.engine.gcpause import paused_gc
from allocation.engine.manifests import load_documents
from allocation.engine.models.base import HELD
from allocation.engine.scenarios.changes import Applied, apply_changes
from allocation.engine.scenarios.documents import DocumentIndex
from allocation.engine.scenarios.fork import fork_state
from allocation.engine.scenarios.outcome import Diff, Outcome, diff, summarize
from allocation.engine.scheduling.diagnosis_text import diff_sentence
from allocation.engine.simulation import Simulation, simulate
from allocation.engine.v1 import Profile

__all__ = ["Evaluation", "evaluate", "refusal"]


@dataclass
class Evaluation:
    """A scenario's simulated state, its outcome and how it differs from the baseline."""

    applied: Applied
    simulation: object
    outcome: Outcome
    diff: Diff
    warnings: list[str] = field(default_factory=list)
    """What loading the added or changed documents warned of, ``Problem.in_object`` (a
    field dropped because its feature gate is off under the profile, an unsimulated kind):
    the field is not used, and the page says so rather than ignore it silently."""
    base: Simulation | None = None
    """The settled simulation ``simulation`` is a fork of (its state differs from
    ``base.state`` only in ``state.changed``), or None when the documents were simulated."""

    @property
    def state(self):
        return self.simulation.state

    def documents(self) -> list[dict]:
        """Every object of the simulated scenario, as manifests (Events excluded)."""
        return [obj.to_manifest() for obj in self.state.all_objects()]


def evaluate(documents: Sequence[dict], changes: Sequence[dict],
             baseline: Outcome | None = None, strategy: str = "first-fit",
             now: datetime = DEFAULT_START, source: str = "scenario",
             settled: Simulation | None = None, base_source: str = "baseline",
             positions: Sequence[int] | None = None,
             profile: Profile | None = None,
             index: DocumentIndex | None = None) -> Evaluation:
    """Simulate ``documents`` with ``changes`` applied.

    ``baseline`` is the baseline's outcome (computed from ``documents`` when not given;
    given with ``settled``, it must be ``summarize(settled.state)``).
    ``settled``, when given, is the settled simulation of ``documents`` loaded as
    ``("baseline", document)`` pairs at ``now`` (or ``(base_source, document)`` pairs
    numbered ``positions``, as :func:`~allocation.engine.scenarios.fork.fork_state` takes):
    the changes are then applied to a fork of it (``scenarios/fork.py``) unless only a
    simulation of the documents can report them. ``profile`` is the Kubernetes profile the
    documents are simulated under (``settled``'s, when given); ``index`` their
    ``DocumentIndex``, when the caller keeps one.

    Raises:
        ChangeError: a change cannot apply (its index and field named).
        InvalidManifests: the changed documents are invalid.
    """
    settled_outcome = baseline  # ``settled``'s own, as the caller gives them together
    if baseline is None:
        baseline = summarize(simulate(load_documents(((source, d) for d in documents),
                                                     profile=profile), strategy, now).state)
    applied = apply_changes(documents, changes, strategy, index)
    warnings: list[str] = []
    if settled is not None:
        with paused_gc():  # allocation-heavy batch (gcpause.py)
            simulation = fork_state(settled, documents, applied, now, source, base_source,
                                    positions, warnings)
            if simulation is not None:
                simulation.settle()
                # the fork differs from the settled baseline only in what it changed
                base = summarize(settled.state) if settled_outcome is None else settled_outcome
                changed = simulation.state.changed
                outcome = summarize(simulation.state, base, changed, settled.state)
                # ``baseline`` is ``base``, or a summary of the same documents afresh
                return Evaluation(applied, simulation, outcome,
                                  diff(baseline, outcome, changed), warnings, base=settled)
    # The baseline's documents were validated when stored; only what changed is checked.
    unchanged = {id(d) for d in documents}
    loaded = load_documents(((source, d) for d in applied.documents),
                            trusted=lambda d: id(d) in unchanged, profile=profile)
    simulation = simulate(loaded, applied.strategy, now)
    outcome = summarize(simulation.state)
    return Evaluation(applied, simulation, outcome, diff(baseline, outcome),
                      [w.in_object for w in loaded.warnings])


def refusal(evaluation: Evaluation, change: dict) -> str | None:
    """Why ``change`` (a ``pin-pod``) did not take effect in ``evaluation``, or None."""
    if change.get("op") != "pin-pod":
        return None
    namespace, _, name = str(change["pod"]).rpartition("/")
    pod = evaluation.state.get("Pod", namespace or "default", name)
    if pod is None or pod.node_name == change["node"]:
        return None
    node = change["node"]
    detail = json.loads(pod.meta.annotations.get(EXPLAIN_ANNOTATION) or "{}")
    # the node's entry, or its nearest-node entry when it is not among the detailed nodes
    for entry in [*(detail.get("nodes") or ()), *(detail.get("nearest") or ())]:
        if entry.get("node") == node and (entry.get("reason") or entry.get("diff")):
            return f"{pod.ref} cannot run on {node}: {_describe(entry)}"
    condition = pod.condition("PodScheduled") or {}
    return f"{pod.ref} cannot run on {node}: {condition.get('message', 'not schedulable')}"


def _describe(entry: dict) -> str:
    """The node's reason, what it lacks (its diff, docs/manifests.md "The explanation")
    and the claims holding devices the pod was refused."""
    parts = [entry.get("reason") or "does not fit"]
    if entry.get("diff"):
        parts.append(diff_sentence(entry["diff"]))
    held = dict.fromkeys(str(group.get("reason")) for request in entry.get("requests") or ()
                         for group in request.get("refused") or ()
                         if str(group.get("reason", "")).startswith(HELD))
    if held:
        parts.append("; ".join(held))
    return " - ".join(parts)
