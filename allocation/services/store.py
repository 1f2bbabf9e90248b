"""Reading the stored cluster: rows in document order, turned into engine objects.

Engine objects are always built from fresh copies of the stored documents, so nothing a
controller does to them can reach a cached row or another caller's state.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from allocation.engine.manifests import LoadResult, build_object
from allocation.engine.objects import KObject, OpaqueObject, Source
from allocation.models import KIND_MODELS, OBJECT_MODELS, Event, StoredObject, VendorObject

__all__ = ["STORED_FILE", "Identity", "identity_of", "model_for", "row_identity", "stored_rows",
           "event_rows", "loaded_from_rows", "build_from_row"]

STORED_FILE = "stored"
"""The file name problems give for objects that come from the database."""

Identity = tuple[str, str, str, str]
"""(API group for vendor objects else "", kind, namespace or "", name)."""


def model_for(obj: KObject) -> type[StoredObject]:
    """The model that stores an engine object."""
    if isinstance(obj, OpaqueObject):
        if obj.kind_name == "Event" and obj.api_version in ("v1", "events.k8s.io/v1"):
            return Event
        return VendorObject
    return KIND_MODELS[obj.kind]


def identity_of(obj: KObject) -> Identity:
    """The identity of an object's row (Events of both API groups are one kind)."""
    vendor = isinstance(obj, OpaqueObject) and model_for(obj) is VendorObject
    group = obj.api_group if vendor else ""
    return group, obj.kind_name, obj.namespace or "", obj.name


def row_identity(row: StoredObject) -> Identity:
    if isinstance(row, VendorObject):
        return row.api_group, row.kind, row.namespace, row.name
    return "", row.KIND, row.namespace, row.name


def stored_rows() -> list[StoredObject]:
    """Every stored object (Events aside) in document order."""
    rows: list[StoredObject] = []
    for model in OBJECT_MODELS:
        rows.extend(model.objects.all())
    rows.sort(key=lambda r: r.position)
    return rows


def event_rows() -> list[Event]:
    return list(Event.objects.order_by("position"))


_PARSED_LIMIT = 200_000
_parsed: OrderedDict[str, Any] = OrderedDict()
_parsed_lock = threading.Lock()


def _document(text: str) -> Any:
    """The parsed document for a stored text, one shared object per distinct text.

    The engine never changes its input documents (tests/allocation/engine/
    test_inputs_unchanged.py), so states built again from unchanged rows share them, and
    with them the inventories parsed from their slices (allocation/engine/inventory_cache).
    """
    with _parsed_lock:
        found = _parsed.get(text)
        if found is not None:
            _parsed.move_to_end(text)
            return found
    document = json.loads(text)
    with _parsed_lock:
        _parsed[text] = document
        while len(_parsed) > _PARSED_LIMIT:
            _parsed.popitem(last=False)
    return document


def build_from_row(row: StoredObject) -> KObject:
    """The engine object of one stored row."""
    return build_object(_document(row.document), Source(STORED_FILE, row.position))


def loaded_from_rows(rows: list[StoredObject], events: list[Event]) -> LoadResult:
    """A LoadResult as the loader would give for the stored documents, in order."""
    return LoadResult(objects=[build_from_row(r) for r in rows],
                      events=[build_from_row(e) for e in events])
