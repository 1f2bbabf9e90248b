"""Scenario services: the only code that writes scenarios.

Every change is evaluated before it is kept: a change the engine cannot honour (a pod
dropped on a node that cannot take it, a selector that does not compile) is refused with
the engine's reason and nothing is saved. Writes happen in one transaction; the scenario's
WebSocket group hears ``scenario.updated`` after commit.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from allocation.engine.manifests import InvalidManifests, load_documents
from allocation.engine.scenarios import ChangeError, apply_changes, check_change, refusal
from allocation.engine.scenarios.manifest import applyable
from allocation.engine.writer import as_list, dump
from allocation.models import OBJECT_MODELS
from allocation.services import cluster
from allocation.services.permissions import check_write
from allocation.services.store import Identity, identity_of, row_identity, stored_rows
from allocation.services.writes import write
from console.events import publish, scenario_updated
from scenarios.evaluation import evaluate_changes, first_build_ahead, outcome_json
from scenarios.models import Scenario

__all__ = ["Refused", "Invalid", "Conflict", "EXPORTS", "can_view", "can_edit", "create",
           "add_change", "evaluation", "undo", "redo", "rebase", "set_shared", "promote",
           "export", "conflicts", "refresh", "record_refresh_failure", "delete"]

class Refused(ValueError):
    """A change the engine refuses; the message says why (for a person)."""


class Invalid(Refused):
    """A change that is not valid input: ill-formed, or it makes a document invalid (a
    selector that does not compile or costs too much); the message names the field."""


class Conflict(Exception):
    """Promotion refused: the baseline changed since the fork; ``changed`` lists what."""

    def __init__(self, scenario: Scenario, current: int, changed: list[dict]) -> None:
        self.scenario, self.current, self.changed = scenario, current, changed
        super().__init__(f"the baseline moved from revision {scenario.base_revision} to "
                         f"{current} since this scenario was forked; {len(changed)} "
                         "object(s) changed")


def can_view(user, scenario: Scenario, token: str | None = None) -> bool:
    """The owner, staff, or anyone signed in with the share link of a shared scenario."""
    if not getattr(user, "is_authenticated", False):
        return False
    if user.is_staff or scenario.owner_id == user.pk:
        return True
    return scenario.shared and token is not None and token == scenario.share_token


def can_edit(user, scenario: Scenario) -> bool:
    return getattr(user, "is_authenticated", False) and scenario.owner_id == user.pk


def _check_edit(user, scenario: Scenario) -> None:
    if not can_edit(user, scenario):
        raise PermissionDenied("only the scenario's owner may change it")


def _announce(scenario: Scenario, origin: str = "") -> None:
    """``scenario.updated`` to the scenario's open pages once the change commits; the page
    ``origin`` whose request made it is named, so its socket does not render the body its
    answer already carries (``scenarios.consumers``)."""
    publication = scenario_updated(scenario.pk, scenario.position, origin)
    transaction.on_commit(lambda: publish(publication))


def _evaluate(changes: list[dict]):
    try:
        return evaluate_changes(changes)
    except ChangeError as exc:
        raise Refused(str(exc)) from None
    except InvalidManifests as exc:
        raise Invalid("; ".join(str(p) for p in exc.problems)) from None


def preparing() -> bool:
    """Whether the next evaluation first builds this process's baseline of a large cluster
    (seconds): pages show a placeholder meanwhile (``evaluation.first_build_ahead``)."""
    return first_build_ahead()


def evaluation(scenario: Scenario):
    """``(Evaluation, Baseline)`` of the changes in effect; raises :class:`Refused`."""
    return _evaluate(scenario.active_changes)


class _Moved(Exception):
    """The scenario's changes moved on since the caller read them (another tab, a promotion)."""


def _save(scenario: Scenario, changes: list[dict], position: int,
          origin: str = "") -> Scenario:
    """Store ``changes`` up to ``position`` with their evaluation, unless the stored scenario
    moved on since ``scenario`` was read: :class:`_Moved` then, and nothing is written.

    Evaluating takes seconds on a large cluster, so the row is checked again, locked, before
    the save: a read-evaluate-save that ignored a change made meanwhile would lose it (or
    bring back changes a promotion applied).
    """
    read = (scenario.changes, scenario.position)
    result, base = _evaluate(changes[:position])
    with transaction.atomic():
        current = Scenario.objects.select_for_update().filter(pk=scenario.pk).first()
        if current is None or (current.changes, current.position) != read:
            raise _Moved()
        scenario.changes = changes
        scenario.position = position
        scenario.outcome = outcome_json(result)
        scenario.evaluated_revision = base.revision
        scenario.evaluated_position = position
        scenario.evaluation_error = ""
        scenario.save()
        _announce(scenario, origin)
    return scenario


def _edit(scenario: Scenario, changes: list[dict], position: int,
          origin: str = "") -> Scenario:
    try:
        return _save(scenario, changes, position, origin)
    except _Moved:
        raise Refused("this scenario was changed meanwhile (in another tab, or promoted); "
                      "reload it and try again") from None


def create(user, name: str) -> Scenario:
    """Fork the baseline: instant, whatever its size (only changes are ever stored)."""
    name = (name or "").strip()
    if not name:
        raise Refused("name: a scenario needs a name")
    with transaction.atomic():
        scenario = Scenario.objects.create(name=name[:200], owner=user,
                                           base_revision=cluster.revision(),
                                           forked_at=timezone.now())
    return scenario


def add_change(user, scenario: Scenario, change: dict, origin: str = "") -> Scenario:
    """Apply ``change`` on top of the changes in effect (dropping any undone ones).

    ``origin`` (here and in the other writers) is the page whose request asks, if one does
    (docs/scenarios.md, "Drag and drop").
    """
    _check_edit(user, scenario)
    try:
        check_change(change, scenario.position)
    except ChangeError as exc:
        raise Invalid(str(exc)) from None
    changes = [*scenario.active_changes, change]
    result, _base = _evaluate(changes)
    reason = refusal(result, change)
    if reason:
        raise Refused(reason)
    return _edit(scenario, changes, len(changes), origin)


def undo(user, scenario: Scenario, origin: str = "") -> Scenario:
    _check_edit(user, scenario)
    if not scenario.can_undo:
        raise Refused("nothing to undo")
    return _edit(scenario, list(scenario.changes), scenario.position - 1, origin)


def redo(user, scenario: Scenario, origin: str = "") -> Scenario:
    _check_edit(user, scenario)
    if not scenario.can_redo:
        raise Refused("nothing to redo")
    return _edit(scenario, list(scenario.changes), scenario.position + 1, origin)


def rebase(user, scenario: Scenario, origin: str = "") -> Scenario:
    """Accept the current baseline as the scenario's base (its changes are kept)."""
    _check_edit(user, scenario)
    with transaction.atomic():
        scenario.base_revision = cluster.revision()
        scenario.forked_at = timezone.now()
        scenario.save()
        _announce(scenario, origin)
    return refresh(scenario, origin)


def set_shared(user, scenario: Scenario, shared: bool, origin: str = "") -> Scenario:
    _check_edit(user, scenario)
    with transaction.atomic():
        scenario.shared = shared
        scenario.save(update_fields=["shared", "updated_at"])
        _announce(scenario, origin)
    return scenario


def delete(user, scenario: Scenario) -> None:
    _check_edit(user, scenario)
    with transaction.atomic():
        scenario.delete()


def refresh(scenario: Scenario, origin: str = "") -> Scenario:
    """Re-evaluate on the current baseline (``scenarios.tasks.refresh_scenarios`` does this
    after the baseline moves)."""
    try:
        return _save(scenario, list(scenario.changes), scenario.position, origin)
    except _Moved:  # whoever moved it evaluated it
        return Scenario.objects.filter(pk=scenario.pk).first() or scenario
    except Refused as exc:  # the baseline changed so that a change no longer applies
        with transaction.atomic():
            scenario.evaluation_error = str(exc)
            scenario.evaluated_revision = cluster.revision()
            scenario.save(update_fields=["evaluation_error", "evaluated_revision",
                                         "updated_at"])
            _announce(scenario, origin)
        return scenario


def record_refresh_failure(scenario: Scenario, revision: int) -> None:
    """Mark ``scenario`` evaluated at ``revision`` with an internal error (the background
    refresh failed on it; the worker logs why), so it is not retried until the baseline
    moves again."""
    Scenario.objects.filter(pk=scenario.pk).update(
        evaluated_revision=revision,
        evaluation_error="internal error while evaluating; see the worker log")


def conflicts(scenario: Scenario, identities: Collection[Identity] = ()) -> list[dict]:
    """Objects of the baseline changed since the fork; ``touched`` if the scenario changes
    them (``identities``: what its changes add, modify or delete) or a change names them."""
    named = {str(v) for change in scenario.active_changes for v in change.values()
             if isinstance(v, str)}
    changed = []
    for model in OBJECT_MODELS:  # every stored kind and vendor objects; Events are history
        for row in model.objects.filter(updated_at__gt=scenario.forked_at):
            ref = f"{row.namespace}/{row.name}" if row.namespace else row.name
            touched = ref in named or row.name in named or row_identity(row) in identities
            changed.append({"kind": getattr(row, "kind", "") or model.KIND, "object": ref,
                            "touched": touched})
    return sorted(changed, key=lambda c: (not c["touched"], c["kind"], c["object"]))


def _changed_documents(documents: Sequence[dict],
                       changes: Sequence[dict]) -> tuple[list[dict], list[dict]]:
    """(documents the changes add or modify, documents they remove or replace).

    ``apply_changes`` is copy-on-write: a document it leaves alone is the very same object
    in its output, so what differs by identity is exactly what the scenario changed.
    """
    after = apply_changes(documents, changes).documents
    before_ids, after_ids = {id(d) for d in documents}, {id(d) for d in after}
    return ([d for d in after if id(d) not in before_ids],
            [d for d in documents if id(d) not in after_ids])


def promote(user, scenario: Scenario, origin: str = "") -> Scenario:
    """Apply the scenario's own changes to the baseline (staff), in one transaction.

    Only what the changes add, modify or delete is written, computed on the baseline as it
    is under the store's write lock, so concurrent writes to other objects are kept (nothing
    is exported and re-imported). Refused (:class:`Conflict`) when an object the scenario
    changes or names was changed in the baseline since the fork or last rebase; other
    baseline changes do not matter. See docs/scenarios.md, "Sharing, export, promotion".
    """
    if not getattr(user, "is_staff", False):
        raise PermissionDenied("only staff may promote a scenario to the baseline")
    source = f"scenario-{scenario.pk}"
    with transaction.atomic():
        cluster.locked_cluster()  # no other write lands between this read and the save
        # The scenario as stored now (a second promotion of it waits here, then finds no
        # changes left to apply).
        scenario = Scenario.objects.select_for_update().get(pk=scenario.pk)
        current = cluster.revision()
        # Events are history: scenarios neither see nor change them (docs/scenarios.md).
        documents = [json.loads(row.document) for row in stored_rows()]
        try:
            written, removed = _changed_documents(documents, scenario.active_changes)
            objects = load_documents((source, d) for d in written).objects
            gone = load_documents((source, d) for d in removed).objects
        except ChangeError as exc:
            raise Refused(str(exc)) from None
        except InvalidManifests as exc:
            raise Invalid("; ".join(str(p) for p in exc.problems)) from None
        kept = {identity_of(o) for o in objects}
        deletes = {identity_of(o) for o in gone} - kept
        if current != scenario.base_revision:
            changed = conflicts(scenario, kept | deletes)
            if any(c["touched"] for c in changed):
                raise Conflict(scenario, current, changed)
        check_write(user, objects)
        try:
            result = write(objects, deletes=deletes)
        except InvalidManifests as exc:
            raise Invalid("; ".join(str(p) for p in exc.problems)) from None
        scenario.changes, scenario.position = [], 0
        scenario.base_revision = result.revision
        scenario.forked_at = timezone.now()
        scenario.promoted_at = timezone.now()
        scenario.save()
        _announce(scenario, origin)
    return scenario


EXPORTS = ("cluster", "changes", "manifest")
"""What a scenario exports: the simulated cluster, its changes, or its plan for kubectl."""


def export(scenario: Scenario, what: str = "cluster", fmt: str = "yaml") -> str:
    """The baseline with the changes applied and simulated (``cluster``), the changes, or
    the objects they add or change as a ``kubectl apply``-ready manifest (``manifest``:
    ``allocation.engine.scenarios.manifest``, docs/live-cluster.md)."""
    if what == "manifest":
        documents = [json.loads(row.document) for row in stored_rows()]
        try:
            written, _removed = _changed_documents(documents, scenario.active_changes)
        except ChangeError as exc:
            raise Refused(str(exc)) from None
        return dump(as_list(applyable(written)), fmt)
    if what == "changes":
        document = {"apiVersion": "draplanner.io/v1alpha1", "kind": "Scenario",
                    "metadata": {"name": scenario.name},
                    "spec": {"baseRevision": scenario.base_revision,
                             "changes": scenario.active_changes}}
        return dump(document, fmt)
    if what != "cluster":
        raise ValueError(f"unknown export {what!r}: use {', '.join(EXPORTS)}")
    # The evaluated scenario: every object with the status the simulation gave it, as
    # `simulate` writes it, so it can be simulated or imported elsewhere.
    result, _base = _evaluate(scenario.active_changes)
    return dump(as_list(result.documents()), fmt)
