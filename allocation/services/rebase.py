"""Saving a worker pass after the stored cluster changed during it (docs/console.md, "The
worker"): which of the pass's changes still apply, and which wait for the next pass.

An object applies when it is stored exactly as the pass read it (or, for one the pass
creates, still absent); the others are conflicts. What the pass decided together with a
conflict (a pod and its claims) waits with it, and so do the Events about them.
"""

from __future__ import annotations

import copy
from datetime import datetime

from allocation.engine.events import VirtualClock
from allocation.engine.objects import (
    KObject,
    Pod,
    PodSchedulingContext,
    ResourceClaim,
    ResourceClaimV1,
)
from allocation.models import StoredObject
from allocation.services.store import (
    Identity,
    LeftOut,
    build_state,
    identity_of,
    model_for,
    row_identity,
    stored_rows,
)
from allocation.services.writes import Plan, row_values

__all__ = ["not_about", "rebase"]


def not_about(events: dict[str, dict], conflicts: list[Identity]) -> dict[str, dict]:
    """The Events (by series hash, ``services.events.fold_pass``) not about a conflict:
    those wait for the next pass with their object."""
    touched = {(kind, namespace, name) for _group, kind, namespace, name in conflicts}
    return {key: e for key, e in events.items()
            if ((e.get("involvedObject") or {}).get("kind"),
                (e.get("involvedObject") or {}).get("namespace") or "",
                (e.get("involvedObject") or {}).get("name")) not in touched}


def rebase(cluster, plan: Plan, left_out: list[LeftOut],
            now: datetime) -> tuple[Plan | None, list[Identity]]:
    """The part of ``plan`` that still applies to the rows stored now, and the conflicts.

    An object applies when it is stored exactly as the pass read it (or, for one the pass
    creates, still absent); the others are conflicts, left for the next pass together with
    the new Events about them. None (save nothing) when the rest would leave a stored
    cluster the engine refuses where it did not before (a node deleted meanwhile that the
    pass bound a pod to, say).
    """
    current = {row_identity(r): r for r in stored_rows()}
    conflicts: set[Identity] = set()
    updates, creates, deletes = [], [], []
    for row, obj, document in plan.update:
        now_row = current.get(row_identity(row))
        if now_row is not None and now_row.document == row.document:
            updates.append((now_row, obj, document))
        else:
            conflicts.add(row_identity(row))
    for row in plan.delete:
        now_row = current.get(row_identity(row))
        if now_row is not None and now_row.document == row.document:
            deletes.append(now_row)
        elif now_row is not None:
            conflicts.add(row_identity(row))
    for obj, document in plan.create:
        if identity_of(obj) in current:
            conflicts.add(identity_of(obj))
        else:
            creates.append((obj, document))
    _couple(conflicts, [o for _r, o, _d in updates] + [o for o, _d in creates])
    rebased = Plan(update=[u for u in updates if identity_of(u[1]) not in conflicts],
                   create=[c for c in creates if identity_of(c[0]) not in conflicts],
                   delete=deletes)
    conflicts = sorted(conflicts)
    if not _still_valid(cluster, current, rebased, left_out, now):
        return None, conflicts
    return rebased, conflicts


def _couple(conflicts: set[Identity], planned: list[KObject]) -> None:
    """Add to ``conflicts`` what the pass decided together with a conflicting object.

    A pod and its claims (and its PodSchedulingContext) are decided together: a claim
    allocated and reserved for a pod that changed meanwhile, or a pod bound with a claim that
    changed meanwhile, must wait for the next pass as well.
    """
    links = {identity_of(obj): _links(obj) for obj in planned}
    grown = True
    while grown:
        grown = False
        for ident, linked in links.items():
            if ident not in conflicts and linked & conflicts:
                conflicts.add(ident)
                grown = True


def _links(obj: KObject) -> set[Identity]:
    namespace = obj.namespace or ""
    if isinstance(obj, Pod):
        return {("", "PodSchedulingContext", namespace, obj.name)} | {
            ("", "ResourceClaim", namespace, obj.claim_name(c))
            for c in obj.claims}
    if isinstance(obj, ResourceClaim):
        return {("", "Pod", namespace, name) for name in [*obj.reserved_pods(), obj.owner_pod]
                if name}
    if isinstance(obj, ResourceClaimV1):
        return {("", "Pod", namespace, r["name"]) for r in obj.reserved_for
                if r.get("resource") == "pods" and r.get("name")}
    if isinstance(obj, PodSchedulingContext):
        return {("", "Pod", namespace, obj.name)}
    return set()


def _still_valid(cluster, current: dict[Identity, StoredObject], plan: Plan,
                 left_out: list[LeftOut], now: datetime) -> bool:
    """Whether the engine takes the stored cluster after ``plan`` as it took the pass's
    input: no row is left out that was not left out of the pass already."""
    doomed = {id(r) for r in plan.delete}
    replaced = {id(row): document for row, _obj, document in plan.update}
    after = []
    for row in current.values():
        if id(row) in doomed:
            continue
        if id(row) in replaced:
            document = replaced[id(row)]
            row = copy.copy(row)  # the real row is saved later, by apply_plan
            row.document = document
        after.append(row)
    position = cluster.next_position
    for obj, document in plan.create:
        after.append(model_for(obj)(position=position, **row_values(obj, document)))
        position += 1
    after.sort(key=lambda r: r.position)
    _state, now_left = build_state(after, [], VirtualClock(now))
    before = {row_identity(i.row) for i in left_out}
    return all(row_identity(i.row) in before for i in now_left)
