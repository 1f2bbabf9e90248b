"""Reading the stored cluster: rows in document order, turned into engine objects.

Engine objects are always built from fresh copies of the stored documents, so nothing a
controller does to them can reach a cached row or another caller's state.

:func:`build_state` is what the worker and the pages use: a stored row that cannot be
loaded (its document does not decode or convert, or the engine refuses the cluster because
of it) is left out and reported, so one broken row never stops the others
(``docs/console.md``, "Failures").
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import orjson

from allocation.engine.events import VirtualClock
from allocation.engine.faults import describe
from allocation.engine.manifests import InvalidManifests, LoadResult, Problem, build_object
from allocation.engine.objects import KObject, OpaqueObject, Source
from allocation.engine.state import ClusterState
from allocation.models import KIND_MODELS, OBJECT_MODELS, Event, StoredObject, VendorObject
from allocation.services.profile import console_profile

__all__ = ["STORED_FILE", "Identity", "identity_of", "model_for", "row_identity", "stored_rows",
           "state_rows", "stored_count",
           "event_rows", "loaded_from_rows", "build_from_row", "LeftOut", "build_state",
           "load_row", "stand_in"]

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
    return KIND_MODELS[obj.kind_spec]


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
    return _rows(lambda model: model.objects.all())


_STATE_FIELDS = ("position", "namespace", "name", "document")
"""The columns a state build reads of a row (``build_state``, ``load_row``, ``LeftOut``;
a vendor object's ``api_group`` and ``kind`` too, ``row_identity``)."""


def state_rows() -> list[StoredObject]:
    """:func:`stored_rows` with only the columns a state build reads: the others are not
    fetched (90,000 rows held 169 MB, 122 MB so; they are alive while the state is built),
    and nothing else may be read from these rows (each other column would cost a query per
    row)."""
    return _rows(lambda model: model.objects.only(
        *_STATE_FIELDS, *(("api_group", "kind") if model is VendorObject else ())))


def _rows(query) -> list[StoredObject]:
    """The rows ``query(model)`` gives of every object table, in document order."""
    rows: list[StoredObject] = []
    for model in OBJECT_MODELS:
        rows.extend(query(model))
    rows.sort(key=lambda r: r.position)
    return rows


def stored_count() -> int:
    """How many objects are stored (Events aside): one count per table, no row read."""
    return sum(model.objects.count() for model in OBJECT_MODELS)


def event_rows() -> list[Event]:
    return list(Event.objects.order_by("position"))


_PARSED_LIMIT = 200_000
_parsed: OrderedDict[bytes, Any] = OrderedDict()
_parsed_lock = threading.Lock()


def _document(text: str) -> Any:
    """The parsed document for a stored text, one shared object per distinct text.

    The engine never changes its input documents (tests/allocation/engine/
    test_inputs_unchanged.py), so states built again from unchanged rows share them, and
    with them the inventories parsed from their slices (allocation/engine/inventory_cache).
    The texts are remembered by a 128-bit digest, not kept: at 5,000 nodes they were some
    80 MB beside their documents in every process that builds states.
    """
    digest = hashlib.blake2b(text.encode(), digest_size=16).digest()
    with _parsed_lock:
        found = _parsed.get(digest)
        if found is not None:
            _parsed.move_to_end(digest)
            return found
    document = _parse(text)
    with _parsed_lock:
        _parsed[digest] = document
        while len(_parsed) > _PARSED_LIMIT:
            _parsed.popitem(last=False)
    return document


def _parse(text: str) -> Any:
    """``json.loads(text)``: the same value, or the same error.

    Through orjson where its value is certainly the standard library's (its failures, and a
    document where it may have read an integer beyond 64 bits, go the standard library's
    way): orjson shares the strings of repeated keys between documents, so a large
    cluster's documents take a quarter less memory.
    """
    try:
        return _shared(orjson.loads(text), beyond=_BeyondInt64)
    except (orjson.JSONDecodeError, _BeyondInt64):
        pass
    return _shared(json.loads(text))


class _BeyondInt64(Exception):
    """A float orjson read where the text may hold an integer beyond 64 bits."""


_INT64 = float(2**63)
"""orjson reads an integer beyond what 64 bits hold (below -2**63, above 2**64 - 1) as a
float, which is then at least this large: looking for such floats in the parsed document
(``_shared``'s walk) replaces a search of every text for 19 digits in a row, a twentieth
of a first pass's reading and building at 5,000 nodes."""


def _shared(value: Any, beyond: type[Exception] | None = None) -> Any:
    """``value`` with each string in it replaced by the interpreter's one equal string
    (``sys.intern``): a large cluster's documents repeat the same few names, namespaces,
    timestamps and versions tens of thousands of times (a quarter of their memory).
    Interned strings are freed with the last document using them. Within a batch
    (:func:`_batch`), each list or object in it is also the batch's one equal list or
    object (:func:`_shared_part`).

    Raises:
        ``beyond``, when given, at a float as large as an integer beyond 64 bits
        (:data:`_INT64`): orjson's reading of such an integer.
    """
    intern = sys.intern
    if beyond is not None and type(value) is float and not -_INT64 < value < _INT64:
        raise beyond
    todo = [value] if type(value) is dict or type(value) is list else []
    table = getattr(_batches, "table", None)
    if todo and table is not None:
        # the document itself is not looked up: no two stored documents are equal
        _shared_part(value, table, beyond, set())
        return value
    while todo:
        container = todo.pop()
        items = container.items() if type(container) is dict else enumerate(container)
        for key, item in items:
            kind = type(item)
            if kind is str:
                container[key] = intern(item)
            elif kind is dict or kind is list:
                todo.append(item)
            elif kind is float and beyond is not None and not -_INT64 < item < _INT64:
                raise beyond
    return value


def _shared_part(part: dict | list, table: dict, beyond: type[Exception] | None,
                 used: set[int]) -> dict | list | None:
    """``part`` with its strings interned and its lists and objects shared (``_shared``):
    the equal part ``table`` already holds, else ``part`` (then held); None when ``part``
    holds a float, at any depth: such a part is kept, not shared (``0.0 == -0.0``, and
    ``1 == 1.0 == True``, though they read differently).

    Sharing equal parts is as safe as sharing equal documents (:func:`_document`): the
    engine never changes its input documents, and an engine object's copy of a part it
    changes is its own (``objects/clone.py``). At 5,000 nodes it shares a template's claim
    spec in every claim, a pod spec's containers, a node's selector in each claim
    allocated there, and so on.

    No part is twice in one document (``used``: the ids of its parts so far), as in a
    parsed one: ``copy.deepcopy`` keeps a part met twice one part in its copy, and a
    change made to the copy at one place (a scenario's edit of a selector, for one) would
    show at the other. A second equal part in a document is the table's second (a slice's
    eight devices' equal capacities are eight parts, each shared by every slice).

    The table's keys name a part by its items: a string as itself, another scalar after
    its type, a shared part by its ``id`` (alive while the table holds the part keyed).
    """
    is_dict = type(part) is dict
    key, shareable = [is_dict], True
    add = key.append
    for name, item in part.items() if is_dict else enumerate(part):
        kind = type(item)
        if is_dict:
            add(name)
        if kind is str:
            item = part[name] = _intern(item)
            add(item)
        elif kind is dict or kind is list:
            found = _shared_part(item, table, beyond, used)
            if found is None:
                shareable = False
            else:
                if found is not item:
                    part[name] = found
                add(id(found))  # an int not after a type: a part
        elif kind is float:
            if beyond is not None and not -_INT64 < item < _INT64:
                raise beyond
            shareable = False
        else:
            add(kind)
            add(item)
    if not shareable:
        return None
    key = tuple(key)  # type: ignore[assignment]
    held = table.setdefault(key, part)  # one hash of the key: it is not cached
    if held is not part:
        part = _one_of(table, key, held, part, used) \
            if type(held) is tuple or id(held) in used else held
    used.add(id(part))
    return part


def _one_of(table: dict, key: tuple, held: Any, part: dict | list, used: set[int]
            ) -> dict | list:
    """The first of the equal parts ``table`` holds at ``key`` (``held``: one part, or a
    tuple of several: a part is never a tuple) that the document does not hold yet, else
    ``part``, then held too."""
    options = held if type(held) is tuple else (held,)
    for option in options:
        if id(option) not in used:
            return option
    table[key] = (*options, part)
    return part


_intern = sys.intern


_batches = threading.local()
"""``table``: this thread's batch of documents read together (:func:`_batch`), if any."""


@contextmanager
def _batch() -> Iterator[None]:
    """The documents read within (in this thread) are one batch: their equal parts one
    object (``_shared``).

    The table naming the parts lives as long as the batch (at 5,000 nodes it holds 857,000
    parts, about 125 MB), then only the documents hold them. A batch within a batch is
    the outer one."""
    if getattr(_batches, "table", None) is not None:
        yield
        return
    _batches.table = {}
    try:
        yield
    finally:
        _batches.table = None


def build_from_row(row: StoredObject) -> KObject:
    """The engine object of one stored row."""
    return build_object(_document(row.document), Source(STORED_FILE, row.position))


def loaded_from_rows(rows: list[StoredObject], events: list[Event]) -> LoadResult:
    """A LoadResult as the loader would give for the stored documents, in order."""
    return LoadResult(objects=[build_from_row(r) for r in rows],
                      events=[build_from_row(e) for e in events])


@dataclass(frozen=True)
class LeftOut:
    """A stored row left out of a state, and why (a problem in the project's format)."""

    row: StoredObject
    problem: Problem

    @property
    def text(self) -> str:
        """``stored:POSITION (Kind namespace/name): path: message``."""
        return str(self.problem)


def _left_out(row: StoredObject, path: str, message: str) -> LeftOut:
    ident = row_identity(row)
    return LeftOut(row, Problem(STORED_FILE, row.position, ident[1], row.namespace or None,
                                row.name, path, message))


def load_row(row: StoredObject) -> KObject | LeftOut:
    """The engine object of ``row``, or why it cannot be loaded (it never raises)."""
    try:
        return build_from_row(row)
    except Exception as error:  # noqa: BLE001 - one row must not stop the others
        return _left_out(row, "<document>", describe("loader", error))


def _tolerant_load(rows: list[StoredObject], left: list[LeftOut]) -> list[KObject]:
    objects = []
    for row in rows:
        loaded = load_row(row)
        (left if isinstance(loaded, LeftOut) else objects).append(loaded)
    return objects


def build_state(rows: list[StoredObject], events: list[Event], clock: VirtualClock,
                shared_parts: bool = False) -> tuple[ClusterState, list[LeftOut]]:
    """The engine state of ``rows`` (and ``events``), leaving out rows it cannot take.

    A row whose document does not decode or convert, and a row the engine's whole-cluster
    checks name (``ClusterState.build``: an allocated device that does not exist, a pod
    bound to a missing node, ...) are left out; the state's ``problems`` list them.

    With ``shared_parts``, the documents' equal parts are one object (``_shared``): for a
    state kept long (the scenario baseline), as the build costs more (at 5,000 nodes
    177 MB less of the 597 the state held, for 1.5-1.7 times the CPU time:
    docs/console.md, "At size").

    Returns:
        The state and the rows left out, with why.

    Raises:
        InvalidManifests: a problem that names no stored row (cannot happen for rows).
    """
    left: list[LeftOut] = []
    with _batch() if shared_parts else nullcontext():
        kept_events = _tolerant_load(events, left)
        objects = _tolerant_load(rows, left)
    by_position = {r.position: r for r in rows}
    while True:
        try:
            state = ClusterState.build(LoadResult(objects=objects, events=kept_events,
                                                  profile=console_profile()), clock)
            break
        except InvalidManifests as error:
            named = {p.doc: p for p in error.problems
                     if p.file == STORED_FILE and p.doc in by_position}
            if not named:
                raise
            for position, problem in named.items():
                left.append(LeftOut(by_position.pop(position), problem))
            # Fresh objects: a failed build has changed the ones it took (uids, picks).
            objects = _tolerant_load([r for r in rows if r.position in by_position], [])
    state.problems.extend(item.problem for item in left)
    return state, left


def stand_in(row: StoredObject) -> KObject:
    """An object with only the identity of ``row``: what Events about a row left out name."""
    metadata = {"name": row.name}
    if row.namespace:
        metadata["namespace"] = row.namespace
    return OpaqueObject({"apiVersion": row.api_version, "kind": row_identity(row)[1],
                         "metadata": metadata}, namespaced=bool(row.namespace))
