"""Object metadata, object keys, and the base class of every engine object."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable

    from allocation.engine.kinds import KindSpec

__all__ = ["ObjectMeta", "ObjectKey", "KObject", "Source", "json_copy", "top_level_copy",
           "share", "stable_uid", "unique_derived_uids"]

_UID_NAMESPACE = uuid.UUID("6f1c3f7e-4a8e-4d59-9a57-0d1ad3a0c0de")
_UID_PREFIX = _UID_NAMESPACE.bytes


def json_copy(value: Any) -> Any:
    """A deep copy of JSON-like data (dicts, lists, scalars), several times faster than
    ``copy.deepcopy``, which matters when every claim of a large cluster is copied."""
    if isinstance(value, dict):
        # a scalar is kept without a call: most values of a document are scalars
        return {k: json_copy(v) if isinstance(v, _CONTAINERS) else v
                for k, v in value.items()}
    if isinstance(value, list):
        return [json_copy(v) if isinstance(v, _CONTAINERS) else v for v in value]
    return value


_CONTAINERS = (dict, list)


def share(value: Any) -> Any:
    """``value`` itself: the "copy" of :meth:`KObject.to_manifest` for a caller that only
    reads the document (the writer), where copying every claim's status cost a third of
    writing ``simulate``'s output."""
    return value


def top_level_copy(document: dict) -> dict:
    """A copy of ``document`` and of its top-level objects, sharing the rest."""
    return {key: dict(value) if type(value) is dict else value
            for key, value in document.items()}


def stable_uid(kind: str, namespace: str | None, name: str) -> str:
    """A UID derived from the object's identity, so output is deterministic.

    ``str(uuid.uuid5(_UID_NAMESPACE, "<kind>/<namespace>/<name>"))`` (RFC 4122 section
    4.3: SHA-1 of namespace and name, version 5, RFC variant), computed on the digest's hex
    text without building a ``UUID``: a uid is made for every pod and claim, and ``uuid5``
    was more than half of the time a template claim takes to make. The version is the
    13th hex digit (``5``); the variant is the top two bits of the 17th (``10``)."""
    text = hashlib.sha1(_UID_PREFIX + f"{kind}/{namespace or ''}/{name}".encode()).hexdigest()
    return (f"{text[:8]}-{text[8:12]}-5{text[13:16]}-{_VARIANT_DIGIT[text[16]]}{text[17:20]}-"
            f"{text[20:32]}")


_VARIANT_DIGIT = {digit: "89ab"[int(digit, 16) & 3] for digit in "0123456789abcdef"}
"""A hex digit with its top two bits set to the RFC 4122 variant (``10``)."""


_UID = attrgetter("meta.uid")


def unique_derived_uids(objects: list[KObject], derived: list[KObject]) -> None:
    """Give each of ``derived`` (objects of ``objects`` whose uid :func:`stable_uid` made)
    that another object of the input already has (a uid copied from an earlier output)
    the next free ``stable_uid`` of ``<name>#1``, ``#2``...: the API server never gives two
    objects one uid, and the planner follows objects by uid."""
    uids = list(filter(None, map(_UID, objects)))
    if len(set(uids)) == len(uids):  # nearly always: every uid once, at C speed
        return
    mine = {id(obj) for obj in derived}
    given = {obj.meta.uid for obj in objects if id(obj) not in mine and obj.meta.uid}
    for obj in derived:
        if obj.meta.uid not in given:
            continue
        attempt = 1
        while (uid := stable_uid(obj.kind, obj.namespace, f"{obj.name}#{attempt}")) in given:
            attempt += 1
        obj.meta.uid = uid
        given.add(uid)


class ObjectKey(NamedTuple):
    """An object's identity in a state: kind name, namespace (None: cluster-scoped), name.

    A named tuple, so hashing and comparing (every state lookup) run in C."""

    kind: str
    namespace: str | None
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else \
            f"{self.kind} {self.name}"

    @property
    def ref(self) -> str:
        """``namespace/name`` (or ``name`` for cluster-scoped objects): ``KObject.ref``,
        known from the key alone (the object may be gone)."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True, slots=True)
class Source:
    """Where an object came from: a file and its document number (from 1)."""

    file: str
    doc: int


@dataclass(slots=True)
class ObjectMeta:
    name: str
    namespace: str | None = None
    uid: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    finalizers: list[str] = field(default_factory=list)
    owner_references: list[dict] = field(default_factory=list)
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None

    @classmethod
    def from_raw(cls, raw: dict, namespaced: bool) -> ObjectMeta:
        # Each container the object's own (the planner edits them); an absent one is made
        # once, not made empty and then copied: every object loaded passes here.
        get = raw.get
        labels, annotations = get("labels"), get("annotations")
        finalizers, owners = get("finalizers"), get("ownerReferences")
        return cls(
            raw["name"],
            (get("namespace") or "default") if namespaced else None,
            get("uid"),
            dict(labels) if labels else {},
            dict(annotations) if annotations else {},
            list(finalizers) if finalizers else [],
            [dict(r) for r in owners] if owners else [],
            get("creationTimestamp"),
            get("deletionTimestamp"),
        )

    def write_into(self, out: dict, copy_value: Callable[[Any], Any] = json_copy) -> None:
        """Update a metadata mapping with the fields the planner may change, each value
        passed through ``copy_value`` (:func:`json_copy`, or :func:`share` for a reader)."""
        # Written out field by field, not as a loop over (key, value) pairs: this runs for
        # every object of every output, and the pairs cost more than the assignments.
        if self.namespace is not None:
            out["namespace"] = self.namespace
        if self.uid is not None:
            out["uid"] = self.uid
        if self.creation_timestamp is not None:
            out["creationTimestamp"] = self.creation_timestamp
        if self.deletion_timestamp is not None:
            out["deletionTimestamp"] = self.deletion_timestamp
        _put(out, "labels", self.labels, copy_value)
        _put(out, "annotations", self.annotations, copy_value)
        _put(out, "finalizers", self.finalizers, copy_value)
        _put(out, "ownerReferences", self.owner_references, copy_value)


def _put(out: dict, key: str, value: Any, copy_value: Callable[[Any], Any]) -> None:
    """``out[key]`` set to a copy of ``value``, or removed when ``value`` is empty."""
    if value:
        out[key] = copy_value(value)
    elif key in out:
        del out[key]


class _Key:
    """``KObject.key``: made at the first read and kept as an attribute of the object,
    where every later read finds it without a call (a settle reads the keys of pods and
    claims about sixteen times per pod placed). It is set as an attribute, never through
    ``__dict__``: naming an object's ``__dict__`` makes CPython (3.11) turn its attributes
    into a dict, and every attribute read of that object then takes a slower path; keyed
    through ``__dict__``, every pod and claim was read so (5-7% of a settle's
    instructions). ``functools.cached_property`` writes ``__dict__``, behind a lock; two
    threads reading a new object's key at once both make the same key."""

    def __get__(self, obj: KObject | None, owner: type | None = None) -> ObjectKey:
        if obj is None:
            return self  # type: ignore[return-value]  # the class's attribute itself
        meta = obj.meta
        key = obj.key = ObjectKey(obj.kind_name, meta.namespace, meta.name)
        return key


class KObject:
    """Base of every engine object: identity, metadata, the input document, its source.

    ``raw`` is the document as read (or as generated); :meth:`to_manifest` writes it back with
    the planner's changes (metadata, status, and fields such as a pod's ``spec.nodeName``).
    """

    kind_spec: ClassVar[KindSpec | None] = None
    """The kind this class types (``allocation/engine/kinds.py``); the three attributes
    below are derived from it."""
    kind: ClassVar[str] = ""
    namespaced: ClassVar[bool] = True
    default_api_version: ClassVar[str] = "v1"

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("kind_spec")
        if spec is not None:
            cls.kind = spec.name
            cls.namespaced = spec.namespaced
            cls.default_api_version = spec.preferred_version

    def __init__(self, raw: dict, source: Source | None = None) -> None:
        namespaced = getattr(self, "_namespaced", self.namespaced)
        self.read_with(raw, ObjectMeta.from_raw(raw.get("metadata") or {}, namespaced), source)

    def read_with(self, raw: dict, meta: ObjectMeta, source: Source | None = None) -> None:
        """Hold ``raw`` with ``meta`` as its metadata: what ``__init__`` sets, for a caller
        that made the document and ``ObjectMeta.from_raw`` of its metadata together (a
        claim made from a template: ``ResourceClaimV1.made_from``)."""
        self.raw = raw
        self.source = source
        self.api_version: str = raw.get("apiVersion") or self.default_api_version
        self.meta = meta

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def namespace(self) -> str | None:
        return self.meta.namespace

    key = _Key()
    """``(kind, namespace, name)``: made once (an object's identity never changes; a copy
    made by ``ClusterState.writable`` shares it)."""

    @property
    def kind_name(self) -> str:
        return self.kind or self.raw.get("kind", "")

    @property
    def ref(self) -> str:
        """``namespace/name`` (or ``name`` for cluster-scoped objects)."""
        return self.key.ref

    def status_manifest(self, copy_value: Callable[[Any], Any] = json_copy) -> Any:
        """The status to write, or ``...`` to keep the input's status untouched.

        Values kept by the object go through ``copy_value`` (:func:`json_copy`, or :func:`share`
        when the document is only read); the returned mapping itself is always new."""
        return ...

    def spec_changes(self, out: dict) -> None:
        """Apply the planner's changes outside metadata and status to ``out``."""

    def to_manifest(self, shared: bool = False) -> dict:
        """The object as a document: its input with the planner's changes.

        A copy of everything, unless ``shared``: then only the document and its top-level
        objects (metadata, spec, status) are new, and what lies deeper is the input's or the
        object's own, for a caller that only reads it (the writer: ``Simulation.output``)."""
        copy_value = share if shared else json_copy
        out = top_level_copy(self.raw) if shared else json_copy(self.raw)
        out["apiVersion"] = self.api_version
        out["kind"] = self.kind_name
        meta = out.setdefault("metadata", {})
        self.meta.write_into(meta, copy_value)
        self.spec_changes(out)
        status = self.status_manifest(copy_value)
        if status is not ...:
            if status:
                out["status"] = status
            else:
                out.pop("status", None)
        return out

    def __repr__(self) -> str:
        return f"<{self.key}>"
