"""The change log (``models.Change``): written with every write, read by the worker to
catch up (docs/console.md, "The worker").

Every write goes through ``writes.apply_plan`` followed by ``writes.commit_revision`` in
one transaction; the first logs the identities it creates, replaces or deletes under the
revision the second commits (the current one plus one), the second prunes the log now and
then. A reader at revision ``r`` catches up to ``now`` with :func:`since` as long as
``r + 1 >= Cluster.changes_from``; otherwise it rebuilds from every row.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection

from allocation.models import Change, Cluster

__all__ = ["KEEP", "record", "prune", "since"]

KEEP = 10_000
"""Revisions whose changes the log keeps (a worker further behind rebuilds)."""
_PRUNE_EVERY = 256

Identity = tuple[str, str, str, str]


def record(cluster: Cluster, identities: Iterable[Identity]) -> None:
    """Log ``identities`` as written by the revision about to be committed."""
    revision = cluster.revision + 1
    rows = [(revision, *ident) for ident in sorted(set(identities))]
    if not rows:
        return
    # one prepared INSERT for every row: an import logs tens of thousands, and building a
    # model instance per row cost as much as storing the objects themselves
    quote = connection.ops.quote_name
    columns = ", ".join(quote(c) for c in ("revision", "group", "kind", "namespace", "name"))
    with connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {quote(Change._meta.db_table)} ({columns}) "
                           "VALUES (%s, %s, %s, %s, %s)", rows)


def prune(cluster: Cluster) -> None:
    """Forget changes older than KEEP revisions, every few hundred revisions (the caller
    saves ``cluster``)."""
    if cluster.revision % _PRUNE_EVERY:
        return
    floor = cluster.revision - KEEP
    if floor > cluster.changes_from:
        Change.objects.filter(revision__lt=floor).delete()
        cluster.changes_from = floor


def since(revision: int, upto: int, changes_from: int) -> set[Identity] | None:
    """The identities written after ``revision`` up to ``upto``, or None when the log no
    longer goes back that far."""
    if revision + 1 < changes_from:
        return None
    return {c.identity for c in Change.objects.filter(revision__gt=revision,
                                                      revision__lte=upto)}
