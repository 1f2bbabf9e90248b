"""Stored Events as Kubernetes keeps them: one Event per series, pruned after a TTL.

Events are not state: a worker pass does not load them (``services/reconcile.py``); it
records what its controllers report and folds that into the stored series here. A repeat of
a series (``engine.events.series_key``: the same reason about the same object from the same
component) updates the one stored Event: ``count`` grows, ``lastTimestamp`` and the message
are the latest, and it moves to the end of the Events' order. An Event that is only an
identical repeat (same type and message) is not news: a pass with nothing else to save
saves nothing, so an idle cluster makes no revisions. Events whose last write is older than
``DRA_EVENT_TTL`` (one hour, like kube-apiserver's ``--event-ttl``) are deleted.
See ``docs/console.md``, "Events".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Min
from django.utils import timezone

from allocation.engine.events import fold
from allocation.engine.manifests import build_object
from allocation.models import Cluster, Event, canonical_json
from allocation.models.event import series_hash
from allocation.services.bulk import insert_rows
from allocation.services.writes import row_values

__all__ = ["EventChanges", "DEFAULT_TTL_SECONDS", "event_ttl", "fold_pass", "plan_events",
           "save_events", "prune_events", "next_prune", "prune"]

DEFAULT_TTL_SECONDS = 3600.0
"""One hour, kube-apiserver's default ``--event-ttl``."""

_CHUNK = 500  # series looked up per query (SQLite's limit on query parameters)


def event_ttl() -> timedelta:
    """How long an Event is kept after its last write (``settings.DRA_EVENT_TTL``)."""
    return timedelta(seconds=getattr(settings, "DRA_EVENT_TTL", DEFAULT_TTL_SECONDS))


def fold_pass(items: list[dict]) -> dict[str, dict]:
    """The Events one pass recorded, one per series, in the order each series last
    happened (repeats within the pass folded with ``engine.events.fold``).

    Returns:
        Each series' Event by its hash (``models.event.series_hash``): computed here once
        per Event and handed on to :func:`plan_events` and :func:`save_events` (a first
        pass records two Events per pod it places; hashing each three times was about a
        twelfth of the pass at 5,000 nodes).
    """
    series: dict[str, dict] = {}
    for item in items:
        key = series_hash(item)
        earlier = series.pop(key, None)
        series[key] = item if earlier is None else fold(earlier, item)
    return series


@dataclass
class EventChanges:
    """What a pass's Events do to the stored ones: new series, repeats of stored ones.

    ``news`` is False when every Event only repeats a stored series with the same type and
    message: then they are worth saving only together with something else.
    """

    create: list[tuple[str, dict]] = field(default_factory=list)  # (series hash, Event)
    update: list[tuple[Event, dict]] = field(default_factory=list)  # the row keeps its hash
    news: bool = False

    def __bool__(self) -> bool:
        return bool(self.create or self.update)


def plan_events(series: dict[str, dict]) -> EventChanges:
    """Match a pass's folded Events (:func:`fold_pass`, by series hash) with the stored
    series."""
    hashes = list(series)
    if len(hashes) > _CHUNK:  # a first pass: most series are new, ask only for stored ones
        known = set(Event.objects.values_list("series", flat=True).iterator())
        hashes = [key for key in hashes if key in known]
    stored: dict[str, Event] = {}
    for start in range(0, len(hashes), _CHUNK):
        # Several stored rows of one series (imported so): the latest carries it on.
        for row in Event.objects.filter(series__in=hashes[start:start + _CHUNK]).order_by(
                "position"):
            stored[row.series] = row
    changes = EventChanges()
    for key, item in series.items():
        row = stored.get(key)
        if row is None:
            changes.create.append((key, item))
            changes.news = True
            continue
        try:
            before = json.loads(row.document)
        except ValueError:
            before = {}
        if not isinstance(before, dict):
            before = {}
        if (before.get("type"), before.get("message")) != (item.get("type"),
                                                           item.get("message")):
            changes.news = True
        changes.update.append((row, fold(before, item)))
    return changes


def save_events(cluster: Cluster, changes: EventChanges, now: datetime) -> None:
    """Store ``changes`` (the caller holds the cluster lock inside a transaction and saves
    ``cluster`` afterwards): new series named ``<object>.<n>`` from
    ``Cluster.event_sequence`` (the engine numbers from 1 in every run), repeats moved to the
    end of the order with their TTL restarted.

    The rows' ``series`` column is the hash :func:`fold_pass` computed: neither the name
    given here nor a fold (``engine.events.fold`` keeps the later Event's fields) changes
    what ``engine.events.series_key`` reads."""
    created = []
    for key, item in changes.create:
        cluster.event_sequence += 1
        involved = item.get("involvedObject") or {}
        document = {**item, "metadata": {
            **(item.get("metadata") or {}),
            "name": f"{involved.get('name', 'event')}.{cluster.event_sequence:08d}"}}
        obj = build_object(document)
        created.append({"position": cluster.next_position,
                        **row_values(obj, _text(obj), Event.columns_for(obj, key))})
        cluster.next_position += 1
    # one prepared INSERT for all (a first pass records two Events per pod it places)
    insert_rows(Event, created)
    updated = []
    for row, document in changes.update:
        obj = build_object(document)
        columns = Event.columns_for(obj, row.series)
        for name, value in row_values(obj, _text(obj), columns).items():
            setattr(row, name, value)
        row.position = cluster.next_position
        cluster.next_position += 1
        row.updated_at = now
        updated.append(row)
    if updated:
        fields = ["document", "position", "updated_at", "count", "type", "reason",
                  "involved_kind", "involved_namespace", "involved_name", "series",
                  "api_version", "status"]
        Event.objects.bulk_update(updated, fields, batch_size=200)


def _text(event) -> str:
    """An Event's stored text, written by orjson (``canonical_json``'s ``parsed``): its
    document holds only the recorder's strings and integers and what a stored text parsed
    to (``engine.events.EventRecorder``, :func:`plan_events`), never an Enum or a UUID.
    The standard library's writer was a quarter of saving a first pass's 80,000 Events at
    5,000 nodes (docs/console.md, "At size (measured)")."""
    return canonical_json(event.raw, parsed=True)


def prune_events(now: datetime) -> int:
    """Delete the Events last written before ``now`` minus the TTL; how many."""
    deleted, _ = Event.objects.filter(updated_at__lt=now - event_ttl()).delete()
    return deleted


def next_prune() -> datetime | None:
    """When the oldest stored Event expires (None: no Events)."""
    oldest = Event.objects.aggregate(oldest=Min("updated_at"))["oldest"]
    return None if oldest is None else oldest + event_ttl()



def prune(now: datetime | None = None) -> datetime | None:
    """Delete the expired Events on their own (the worker, between passes); when the next
    one expires. Not a change of the cluster: no revision, no announcement (Events are not
    state; the live pages show the rest with the next change)."""
    now = now or timezone.now()
    with transaction.atomic():
        prune_events(now)
        return next_prune()
