"""The one write path: plan row changes, validate what they touch, save, announce.

Every write (an import, one object through the API or admin, a worker pass) becomes a
:class:`Plan` of rows to create, update and delete. :func:`write` checks that the engine
accepts the cluster the plan leads to (``ClusterState.build``: the same checks as
``simulate``), applies it in one transaction, bumps the revision and announces the change
after commit. Nothing is written when validation fails. A write reads only the rows it
replaces and those its checks need, through indexes (``services/touched.py``); an import
that replaces the whole cluster reads and checks every row.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from allocation.engine.events import VirtualClock
from allocation.engine.manifests import InvalidManifests, LoadResult
from allocation.engine.manifests.uids import duplicate_uids
from allocation.engine.objects import KObject
from allocation.engine.simulation import refuse_unsimulated_v1
from allocation.engine.state import ClusterState
from allocation.models import Cluster, Event, StoredObject, canonical_json
from allocation.services import changes
from allocation.services.broadcast import announce_after_commit
from allocation.services.bulk import insert_rows, update_rows
from allocation.services.cluster import locked_cluster
from allocation.services.store import (
    STORED_FILE,
    Identity,
    LeftOut,
    event_rows,
    identity_of,
    load_row,
    model_for,
    row_identity,
    stored_rows,
)
from allocation.services.touched import (
    claim_references,
    neighbourhood,
    rows_of,
    uid_holders,
)

__all__ = ["Plan", "WriteResult", "plan_changes", "apply_plan", "write", "row_values"]


@dataclass
class Plan:
    """Row changes: objects to create or update (with their documents), rows to delete."""

    create: list[tuple[KObject, str]] = field(default_factory=list)
    update: list[tuple[StoredObject, KObject, str]] = field(default_factory=list)
    delete: list[StoredObject] = field(default_factory=list)
    unchanged: list[Identity] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.create or self.update or self.delete)

    @property
    def kinds(self) -> list[str]:
        kinds = {o.kind_name for o, _ in self.create} | {o.kind_name for _, o, _ in self.update}
        kinds |= {row_identity(r)[1] for r in self.delete}
        return sorted(kinds)


@dataclass
class WriteResult:
    """What a write did: identities created, updated, unchanged and deleted; the revision."""

    created: list[Identity]
    updated: list[Identity]
    unchanged: list[Identity]
    deleted: list[Identity]
    revision: int
    kinds: list[str]

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated or self.deleted)


def row_values(obj: KObject, document: str, columns: dict | None = None) -> dict:
    """Every column of ``obj``'s row except its position; ``columns``: the model's own
    (``columns_for``), when the caller has made them already."""
    values = {"api_version": obj.api_version, "namespace": obj.namespace or "",
              "name": obj.name, "uid": obj.meta.uid or "", "document": document, "status": ""}
    values.update(model_for(obj).columns_for(obj) if columns is None else columns)
    return values


def plan_changes(rows: Iterable[StoredObject], desired: Iterable[tuple[KObject, str]],
                 prune: bool = False, deletes: Collection[Identity] = ()) -> Plan:
    """Compare stored rows with the desired objects (and their canonical documents).

    ``prune`` deletes rows not desired; ``deletes`` names rows to delete in any case.
    """
    plan = Plan()
    by_identity = {row_identity(r): r for r in rows}
    seen: set[Identity] = set()
    for obj, document in desired:
        ident = identity_of(obj)
        seen.add(ident)
        row = by_identity.get(ident)
        if row is None:
            plan.create.append((obj, document))
        elif row.document != document:
            plan.update.append((row, obj, document))
        else:
            plan.unchanged.append(ident)
    for ident, row in by_identity.items():
        if ident in deletes or (prune and ident not in seen):
            plan.delete.append(row)
    return plan


def apply_plan(cluster: Cluster, plan: Plan) -> None:
    """Save ``plan``'s rows and log them (``services/changes.py``) under the revision that
    :func:`commit_revision` commits next; the caller holds the cluster lock inside a
    transaction and commits the revision in it."""
    changes.record(cluster, [*(row_identity(r) for r in plan.delete),
                             *(identity_of(o) for _r, o, _d in plan.update),
                             *(identity_of(o) for o, _d in plan.create)])
    doomed: dict[type, list[int]] = defaultdict(list)
    for row in plan.delete:
        doomed[type(row)].append(row.pk)
    for model, pks in doomed.items():
        model.objects.filter(pk__in=pks).delete()
    created: dict[type, list[dict]] = defaultdict(list)
    updated: dict[tuple[type, tuple[str, ...]], list[tuple[int, dict]]] = defaultdict(list)
    for row, obj, document in plan.update:
        if type(row) is not model_for(obj):
            # Another version of the same object (a seed claim replaced by a v1 claim of
            # that name): another table, the same place in document order (docs/v1.md).
            type(row).objects.filter(pk=row.pk).delete()
            created[model_for(obj)].append({"position": row.position,
                                            **row_values(obj, document)})
            continue
        values = _changed_columns(row, row_values(obj, document))
        updated[(type(row), tuple(values))].append((row.pk, values))
    for (model, _names), changed in updated.items():
        update_rows(model, changed)
    for obj, document in plan.create:
        model = model_for(obj)
        created[model].append({"position": cluster.next_position, **row_values(obj, document)})
        cluster.next_position += 1
    for model, new_rows in created.items():
        insert_rows(model, new_rows)


def _changed_columns(row: StoredObject, values: dict) -> dict:
    """The ``values`` that differ from ``row``'s, set on ``row``.

    An UPDATE maintains every index on each column it sets, even to the value it had: a
    worker's first pass rewrote the name, namespace and uid indexes of every pod it bound
    (only the document, node and status change), a fifth of its row writes at 5,000 nodes
    (docs/console.md, "At size (measured)")."""
    changed = {name: value for name, value in values.items() if getattr(row, name) != value}
    for name, value in changed.items():
        setattr(row, name, value)
    return changed


def commit_revision(cluster: Cluster, kinds: list[str]) -> int:
    """Count one more write and announce it after commit."""
    cluster.revision += 1
    cluster.token = uuid.uuid4().hex
    changes.prune(cluster)
    cluster.save()
    announce_after_commit(kinds, cluster.revision)
    return cluster.revision


def _validate(rows: list[StoredObject], events: list[Event], plan: Plan) -> None:
    """Raise InvalidManifests if the engine would refuse the cluster after ``plan``."""
    replaced = {id(row): obj for row, obj, _ in plan.update}
    doomed = {id(row) for row in plan.delete}

    def kept(seq: list) -> list[KObject]:
        # A stored row that cannot be loaded at all is left out, as the worker and the pages
        # leave it out (store.build_state): it must not refuse every other write.
        out = []
        for row in seq:
            if id(row) not in doomed:
                obj = replaced.get(id(row)) or load_row(row)
                if not isinstance(obj, LeftOut):
                    out.append(obj)
        return out

    loaded = LoadResult(objects=kept(rows), events=kept(events))
    for obj, _ in plan.create:
        (loaded.events if model_for(obj) is Event else loaded.objects).append(obj)
    _refuse_unsimulated(loaded)
    problems = [p for p in duplicate_uids(loaded.objects) if p.file != STORED_FILE]
    if problems:
        raise InvalidManifests(problems)
    ClusterState.build(loaded, VirtualClock(timezone.now()))


def _validate_touched(plan: Plan) -> None:
    """Raise InvalidManifests if the engine would refuse the cluster after ``plan``, judged
    on what the plan touches (``services/touched.py``): the same problems as
    :func:`_validate` about every object a write can make invalid."""
    replaced = {(type(row), row.pk): obj for row, obj, _ in plan.update}
    doomed = {(type(row), row.pk) for row in plan.delete}
    written = [obj for _, obj, _ in plan.update]
    written += [obj for obj, _ in plan.create if model_for(obj) is not Event]
    touched = [row for row, _, _ in plan.update] + list(plan.delete)
    rows, loaded = neighbourhood(written, touched, load_row)
    placed: dict[tuple[type, int], tuple[int, KObject]] = {}
    for row in [*rows, *(row for row, _, _ in plan.update)]:
        key = (type(row), row.pk)
        if key in doomed or key in placed:
            continue
        obj = replaced.get(key) or loaded.get(key) or load_row(row)
        if not isinstance(obj, LeftOut):  # left out, as the worker and pages leave it out
            placed[key] = (row.position, obj)
    objects = [obj for _position, obj in sorted(placed.values(), key=lambda p: p[0])]
    objects += [obj for obj, _ in plan.create if model_for(obj) is not Event]
    # The v1 dialect rule reads the claims and templates the written pods name.
    named = {id(o) for o in objects}
    references = [load_row(row) for row in rows_of(claim_references(written))
                  if (type(row), row.pk) not in doomed and (type(row), row.pk) not in replaced]
    dialects = [o for o in references if not isinstance(o, LeftOut) and id(o) not in named]
    _refuse_unsimulated(LoadResult(objects=[*dialects, *objects]))
    _refuse_duplicate_uids(written, doomed)
    ClusterState.build(LoadResult(objects=objects), VirtualClock(timezone.now()))


def _refuse_duplicate_uids(written: list[KObject], doomed: set[tuple[type, int]]) -> None:
    """A written object may not take a uid a stored object has (``manifests/uids.py``)."""
    holders = [load_row(row) for row in uid_holders(written)
               if (type(row), row.pk) not in doomed]
    problems = duplicate_uids(written, [o for o in holders if isinstance(o, KObject)])
    if problems:
        raise InvalidManifests(problems)


def _refuse_unsimulated(loaded: LoadResult) -> None:
    """What the engine cannot simulate yet is refused as ``simulate`` refuses it
    (``simulation.refuse_unsimulated_v1``, docs/v1.md), judged on the whole cluster after the
    write (a pod names stored claims) but only for the objects written now: a stored row
    refused by a later rule must not block every other write."""
    try:
        refuse_unsimulated_v1(loaded)
    except InvalidManifests as error:
        written = [p for p in error.problems if p.file != STORED_FILE]
        if written:
            raise InvalidManifests(written) from None


def write(objects: list[KObject], events: list[KObject] = (), replace_all: bool = False,
          deletes: Collection[Identity] = ()) -> WriteResult:
    """Create or replace ``objects`` (and ``events``), delete ``deletes`` (or, with
    ``replace_all``, everything not given); validate; save in one transaction."""
    with transaction.atomic():
        cluster = locked_cluster()
        # The objects are the loader's: their documents are parsed JSON or YAML.
        desired = [(o, canonical_json(o.raw, parsed=True)) for o in objects]
        desired_events = [(e, canonical_json(e.raw, parsed=True)) for e in events]
        if replace_all:  # the whole cluster is the input: every row is read and checked
            rows, stored_events = stored_rows(), event_rows()
        else:
            named = [identity_of(o) for o, _ in (*desired, *desired_events)]
            found = rows_of([*named, *deletes])
            rows = [r for r in found if not isinstance(r, Event)]
            stored_events = [r for r in found if isinstance(r, Event)]
        plan = plan_changes(rows, desired, prune=replace_all, deletes=deletes)
        event_plan = plan_changes(stored_events, desired_events, prune=replace_all,
                                  deletes=deletes)
        merged = _merge(plan, event_plan)
        if replace_all:
            _validate(rows, stored_events, merged)
        else:
            _validate_touched(merged)
        revision = cluster.revision
        if merged:
            apply_plan(cluster, merged)
            revision = commit_revision(cluster, merged.kinds)
    return WriteResult(
        created=[identity_of(o) for o, _ in merged.create],
        updated=[identity_of(o) for _, o, _ in merged.update],
        unchanged=merged.unchanged, deleted=[row_identity(r) for r in merged.delete],
        revision=revision, kinds=merged.kinds)


def _merge(first: Plan, second: Plan) -> Plan:
    return Plan(first.create + second.create, first.update + second.update,
                first.delete + second.delete, first.unchanged + second.unchanged)
