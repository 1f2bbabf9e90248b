"""The clusters app's services: the only writers of what is read from a live cluster.

Objects read from a cluster are stored exactly like an upload: the engine's loader (the same
validation and problems as ``import FILE``), then the store's one write path
(``allocation.services.writes.write``: whole-cluster checks, one transaction, an announcement
after commit). Unlike an upload, one invalid object does not refuse the rest: it is left
out and reported with its kind, namespace and name, and the rest is stored
(docs/live-cluster.md, "What is stored"). The identities read are kept
(:class:`MirroredObject`), so they are read-only for people and a relist deletes those the
cluster no longer has. The source's status (:class:`ClusterSource`) is written here too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from allocation.engine.gcpause import paused_gc
from allocation.engine.kinds import scope
from allocation.engine.manifests import InvalidManifests, Problem, load_documents
from allocation.services.bulk import insert_rows
from allocation.services.profile import console_profile
from allocation.services.store import Identity, identity_of
from allocation.services.writes import WriteResult, write
from clusters.kube.listing import Snapshot
from clusters.kube.watching import Change
from clusters.models import ClusterSource, MirroredObject

__all__ = ["SyncReport", "store_snapshots", "apply_changes", "refuse_mirrored",
           "source", "record_start", "record_state", "record_error", "mirrored_kinds",
           "READ_ONLY_HINT"]

READ_ONLY_HINT = ("it is mirrored from the live cluster, which is the truth: change it there, "
                  "or try the change in a what-if scenario (/scenarios/)")

_RETRIES = 20
"""Rounds of leaving out objects the whole-cluster checks refuse, before giving up."""

_REJECTED_KEPT = 50
"""How many problems of refused objects the source's status keeps."""


@dataclass
class SyncReport:
    """What one store of cluster objects did."""

    counts: dict[str, int] = field(default_factory=dict)
    """Objects stored per kind (a snapshot), or changes applied per kind (events)."""
    rejected: list[Problem] = field(default_factory=list)
    """Problems of the objects left out (each names kind, namespace and name)."""
    deferred: dict[Identity, dict | None] = field(default_factory=dict)
    """Changes the whole-cluster checks refused now (a pod whose node has not arrived yet):
    the mirror offers them again with the next changes."""
    result: WriteResult | None = None


def _ident(document: dict) -> Identity:
    """The identity of the row ``document`` would be (``store.identity_of`` of the object the
    loader makes of it): a pod listed without a namespace is keyed under ``default``, as
    the loader keys it. A malformed document still has one, for the loader to refuse."""
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
    kind = str(document.get("kind", ""))
    namespace = metadata.get("namespace")
    return ("", kind, str(scope(kind, namespace if isinstance(namespace, str) else None) or ""),
            str(metadata.get("name", "")))


def _problem_ident(problem: Problem) -> Identity:
    return "", problem.kind or "", problem.namespace or "", problem.name or ""


def _load(named: list[tuple[str, dict]], report: SyncReport,
          checked: Callable[[dict], bool] | None = None) -> list:
    """Engine objects of the valid documents; the invalid ones are reported and left out.

    ``checked(document)`` tells a document the loader took without a problem before, with
    the same profile (``clusters/kube/prechecks.py``): its check is not repeated."""
    trusted = None
    if checked is not None:
        given: dict[Identity, dict] = {}

        def trusted(data: dict) -> bool:
            # The loader asks about the document it checks: the document given, or for a v1
            # kind its converted copy, whose kind and metadata stay those of the document
            # given. A document given is asked by itself; identities (90,000 for a large
            # cluster) are read only once another one is asked about.
            if checked(data):
                return True
            if not isinstance(data, dict):
                return False
            if not given:
                given.update((_ident(document), document) for _name, document in named)
            original = given.get(_ident(data))
            return original is not None and original is not data and checked(original)
    while True:
        try:
            return load_documents(named, trusted=trusted, profile=console_profile()).objects
        except InvalidManifests as exc:
            numbers: dict[str, int] = {}
            located = []
            for name, document in named:
                numbers[name] = numbers.get(name, 0) + 1
                located.append((name, numbers[name], document))
            bad = {(p.file, p.doc) for p in exc.problems}
            if not bad & {(name, n) for name, n, _ in located}:
                raise  # no document to blame: nothing can be stored
            report.rejected.extend(exc.problems)
            named = [(name, doc) for name, n, doc in located if (name, n) not in bad]


def _write(documents: dict[Identity, tuple[str, dict]], deletes: set[Identity],
           report: SyncReport, replace: bool = False,
           checked: Callable[[dict], bool] | None = None) -> tuple[list, set[Identity]]:
    """Validate and write; objects or deletes the whole cluster refuses are left out
    (reported, and kept in ``report.deferred`` for the mirror). Returns what was written."""
    objects = _load(list(documents.values()), report, checked)
    deletes = set(deletes)
    for _round in range(_RETRIES):
        try:
            report.result = write(objects, deletes=deletes, replace_all=replace)
            return objects, deletes
        except InvalidManifests as exc:
            blamed = {_problem_ident(p) for p in exc.problems}
            kept = [o for o in objects if identity_of(o) not in blamed]
            if len(kept) < len(objects):
                for obj in objects:
                    if identity_of(obj) in blamed:
                        report.deferred[identity_of(obj)] = documents[identity_of(obj)][1]
                report.rejected.extend(p for p in exc.problems
                                       if _problem_ident(p) in
                                       {identity_of(o) for o in objects})
                objects = kept
            elif deletes:
                # A stored object still needs what is deleted (a pod on a node deleted
                # first): keep the deletes for the next round of changes.
                report.deferred.update(dict.fromkeys(deletes))
                report.rejected.extend(exc.problems)
                deletes = set()
            else:
                raise
    raise InvalidManifests(report.rejected)


def _file(context: str, kind: str) -> str:
    return f"{context or 'cluster'}:{kind}"


def store_snapshots(context: str, snapshots: Sequence[Snapshot], replace: bool = False,
                    versions: dict[str, str] | None = None,
                    checked: Callable[[dict], bool] | None = None) -> SyncReport:
    """Store every object of ``snapshots`` (one per kind, from a list) in one transaction.

    Objects of those kinds mirrored before but no longer in the cluster are deleted;
    ``replace`` makes the stored cluster exactly the snapshots (``import --replace``).
    Invalid objects are left out and reported. ``checked(item)`` is true for an item of
    the snapshots the loader took without a problem already (``Prechecker.valid``): the
    store does not check it again, and stores the same.

    Returns:
        What was stored, and the problems of what was left out.

    Raises:
        InvalidManifests: nothing could be stored.
    """
    report = SyncReport()
    documents: dict[Identity, tuple[str, dict]] = {}
    for snapshot in snapshots:
        for item in snapshot.items:
            documents[_ident(item)] = (_file(context, snapshot.resource.kind), item)
    kinds = {s.resource.kind for s in snapshots}
    # A whole cluster's objects, rows and documents: no cycles for the collector to find,
    # only live objects to traverse again and again (allocation/engine/gcpause.py).
    with paused_gc(), transaction.atomic():
        gone = {m.identity for m in MirroredObject.objects.filter(kind__in=kinds)} - set(
            documents)
        objects, _deleted = _write(documents, gone, report, replace, checked)
        MirroredObject.objects.filter(kind__in=kinds).delete()
        if replace:
            MirroredObject.objects.all().delete()
        insert_rows(MirroredObject, [{"group": g, "kind": k, "namespace": n, "name": m}
                                     for g, k, n, m in (identity_of(o) for o in objects)])
        for obj in objects:
            report.counts[obj.kind_name] = report.counts.get(obj.kind_name, 0) + 1
        now = timezone.now()
        row = _source_row(context)
        row.imported_at = row.last_event_at = now
        row.objects_count = MirroredObject.objects.count()
        row.rejected = [str(p) for p in report.rejected[:_REJECTED_KEPT]]
        if versions is not None:
            row.versions = versions
        row.save()
    return report


def apply_changes(context: str, changes: Iterable[Change],
                  deferred: dict[Identity, dict | None] | None = None) -> SyncReport:
    """Apply watch changes in order (the last change of an object wins), in one transaction.

    ``deferred`` are changes refused earlier (offered again first, so a later change of the
    same object wins). A ``RELIST`` replaces what is mirrored of its kind. Returns the
    report; its ``deferred`` are the changes refused again.
    """
    report = SyncReport()
    pending: dict[Identity, tuple[str, dict] | None] = {}
    for ident, document in (deferred or {}).items():
        pending[ident] = None if document is None else (_file(context, ident[1]), document)
    for change in changes:
        kind = change.resource.kind
        report.counts[kind] = report.counts.get(kind, 0) + 1
        if change.type == "RELIST" and change.snapshot is not None:
            listed = {_ident(item): item for item in change.snapshot.items}
            mirrored = {m.identity for m in MirroredObject.objects.filter(kind=kind)}
            known = mirrored | {i for i in pending if i[1] == kind}
            for ident in known - set(listed):
                pending[ident] = None
            for ident, item in listed.items():
                pending[ident] = (_file(context, kind), item)
        elif change.object is not None:
            ident = _ident(change.object)
            pending.pop(ident, None)  # keep the order of changes: the last one goes last
            pending[ident] = (None if change.type == "DELETED"
                              else (_file(context, kind), change.object))
    documents = {i: d for i, d in pending.items() if d is not None}
    deletes = {i for i, d in pending.items() if d is None}
    with transaction.atomic():
        stored_deletes = deletes & {m.identity for m in MirroredObject.objects.filter(
            kind__in={i[1] for i in deletes})}
        objects, deleted = _write(documents, stored_deletes, report)
        _forget(deleted)
        MirroredObject.objects.bulk_create(
            [MirroredObject(group=g, kind=k, namespace=n, name=m)
             for g, k, n, m in (identity_of(o) for o in objects)],
            batch_size=1000, ignore_conflicts=True)
        row = _source_row(context)
        row.last_event_at = timezone.now()
        row.objects_count = MirroredObject.objects.count()
        if report.rejected:
            row.rejected = [str(p) for p in report.rejected[:_REJECTED_KEPT]]
        row.save()
    return report


def _forget(identities: set[Identity]) -> None:
    for group, kind, namespace, name in identities:
        MirroredObject.objects.filter(group=group, kind=kind, namespace=namespace,
                                      name=name).delete()


def mirrored_kinds() -> set[str]:
    return set(MirroredObject.objects.values_list("kind", flat=True).distinct())


def refuse_mirrored(objects: list) -> str | None:
    """The message refusing a person's write of mirrored objects, or None (a check of
    ``allocation.services.permissions``: mirrored objects are read-only)."""
    if not objects or not MirroredObject.objects.exists():
        return None
    wanted = {identity_of(o) for o in objects}
    if len(wanted) > 500:
        mirrored = {m.identity for m in MirroredObject.objects.all()}
    else:
        names = {i[3] for i in wanted}
        mirrored = {m.identity for m in MirroredObject.objects.filter(name__in=names)}
    hit = sorted(wanted & mirrored)
    if not hit:
        return None
    refs = ", ".join(f"{k} {n}/{m}" if n else f"{k} {m}" for _g, k, n, m in hit[:5])
    more = f" and {len(hit) - 5} more" if len(hit) > 5 else ""
    row = ClusterSource.objects.first()
    context = f" (context {row.context})" if row is not None and row.context else ""
    return f"{refs}{more}: read-only{context}: {READ_ONLY_HINT}"


def source() -> ClusterSource | None:
    """The live cluster source, if the stored cluster was read from one."""
    return ClusterSource.objects.first()


def _source_row(context: str) -> ClusterSource:
    row = ClusterSource.objects.select_for_update().first()
    if row is None:
        row = ClusterSource(context=context)
    row.context = context
    return row


def record_start(context: str, server: str, state: str) -> None:
    """A new import or mirror of ``context`` at ``server`` begins (no credentials kept)."""
    with transaction.atomic():
        row = _source_row(context)
        row.server, row.state = server, state
        row.started_at = timezone.now()
        row.error, row.error_since = "", None
        row.save()


def record_state(state: str) -> None:
    """The source is in ``state`` now (healthy again: the error is cleared)."""
    with transaction.atomic():
        row = ClusterSource.objects.select_for_update().first()
        if row is None:
            return
        row.state = state
        if state != ClusterSource.FAILING:
            row.error, row.error_since = "", None
        row.save()


def record_error(message: str) -> None:
    """The source failed with ``message``; ``error_since`` stays at the first failure."""
    with transaction.atomic():
        row = ClusterSource.objects.select_for_update().first()
        if row is None:
            return
        if not row.error_since:
            row.error_since = timezone.now()
        row.state, row.error = ClusterSource.FAILING, message[:2000]
        row.save()

