"""The documents a scenario edits: copy-on-write by identity, and what every edit shares.

:class:`Documents` holds a baseline's documents by object key and copies one only when an
operation (``scenarios/operations.py``) changes it, so applying changes to a large cluster
costs what they change; the documents it did not touch are the baseline's own objects (the
fork of the settled state, ``scenarios/fork.py``, finds what changed by identity).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from allocation.engine import kinds
from allocation.engine.constants import EXPLAIN_ANNOTATION, V1_CLAIM_FINALIZER
from allocation.engine.objects import ObjectKey

__all__ = ["ChangeError", "Applied", "Delta", "Documents", "DocumentIndex", "key_of",
           "unbind", "is_v1_claim", "deallocate_v1"]


class ChangeError(ValueError):
    """A change that cannot apply: ``changes[i].field: message``."""

    def __init__(self, index: int, field_name: str, message: str) -> None:
        self.index, self.field, self.message = index, field_name, message
        super().__init__(f"changes[{index}].{field_name}: {message}")


@dataclass
class Delta:
    """How the documents after the changes differ from the baseline's list ``of``, by
    identity: what a scan of both lists would find, found from what the edits touched."""

    of: Sequence[dict]
    fresh: list[dict]
    """The documents that are not the baseline's, in the order of the documents after."""
    gone: list[int]
    """The indexes in ``of`` of the baseline's documents no longer among them, ascending."""


@dataclass
class Applied:
    """Documents after the changes, and the strategy the scenario asks for."""

    strategy: str = "first-fit"
    added_nodes: list[str] = field(default_factory=list)
    removed_nodes: list[str] = field(default_factory=list)
    moved: set[ObjectKey] = field(default_factory=set)
    """Keys removed and then added again: their documents go last, as a new object's."""
    delta: Delta | None = None
    """What differs from the documents the changes were applied to, when known."""
    edited: Documents | None = field(default=None, repr=False, compare=False)
    """The edited documents :attr:`documents` lists (set once the changes are applied)."""
    _documents: list[dict] | None = field(default=None, init=False, repr=False,
                                          compare=False)

    @property
    def documents(self) -> list[dict]:
        """Every document after the changes, in document order.

        Listed when first asked for: a fork of the settled baseline takes what changed
        from :attr:`delta` and never asks (tens of thousands of documents listed on every
        drop of a large cluster, docs/scenarios.md).

        Raises:
            ValueError: no changes were applied yet (:attr:`edited` is not set).
        """
        if self._documents is None:
            if self.edited is None:
                raise ValueError("no documents: the changes are not applied yet")
            self._documents = self.edited.documents()
        return self._documents


def key_of(doc: dict) -> ObjectKey:
    """The key the loader gives the object ``doc`` describes."""
    meta = doc.get("metadata") or {}
    kind = doc.get("kind", "")
    return ObjectKey(kind, kinds.scope(kind, meta.get("namespace")), meta.get("name"))


class DocumentIndex:
    """A baseline's documents by object key, in document order: made once per baseline, so
    each evaluation copies two containers instead of keying every document again."""

    def __init__(self, documents: Sequence[dict],
                 keys: Sequence[ObjectKey] | None = None) -> None:
        """``keys``, when given, are the documents' keys (``key_of`` of each, in order),
        which a caller that knows them saves keying every document again."""
        self.documents = documents
        self.order: list[ObjectKey] = []
        self.by_key: dict[ObjectKey, dict] = {}
        self.at: dict[ObjectKey, int] = {}  # the index in ``documents`` of by_key's document
        self.shadowed: list[int] = []  # indexes of documents a later one of their key replaced
        if keys is None:
            keys = [key_of(doc) for doc in documents]
        for at, (key, doc) in enumerate(zip(keys, documents, strict=True)):
            if key not in self.by_key:
                self.order.append(key)
            else:
                self.shadowed.append(self.at[key])
            self.by_key[key] = doc
            self.at[key] = at
        self._groupings: dict[str, dict[str, list[ObjectKey]]] = {}
        # the claims reserved for each pod, so unbinding a pod looks at its own claims,
        # not at every claim of a large cluster
        self._reserving: dict[tuple[str | None, object], list[ObjectKey]] = {}
        for key, doc in self.by_key.items():
            if key.kind != "ResourceClaim":
                continue
            for entry in (doc.get("status") or {}).get("reservedFor") or ():
                if isinstance(entry, dict) and entry.get("resource") == "pods":
                    holders = self._reserving.setdefault((key.namespace, entry.get("name")), [])
                    if key not in holders:
                        holders.append(key)

    def grouped(self, name: str, group: Callable[[ObjectKey, dict], Iterable[str]]
                ) -> dict[str, list[ObjectKey]]:
        """The keys of the documents by each value ``group`` gives for them, in document
        order; made once per index and ``name`` (a grouping is one rule: the same name,
        the same ``group``), so an operation looks at the documents it concerns rather
        than at every document of a large cluster.

        Returns:
            The keys by value; a key is under each value its document gives.
        """
        found = self._groupings.get(name)
        if found is None:
            found = {}
            for key, doc in self.by_key.items():
                for value in group(key, doc):
                    found.setdefault(value, []).append(key)
            self._groupings[name] = found
        return found

    def reserving(self, namespace: str | None, pod: str) -> list[ObjectKey]:
        """The baseline's ResourceClaims in ``namespace`` whose ``reservedFor`` names the
        pod ``pod``, in document order."""
        return self._reserving.get((namespace, pod), [])


class Documents:
    """Documents by object key, in document order, with copy-on-write edits."""

    def __init__(self, documents: Sequence[dict], index: DocumentIndex | None = None) -> None:
        """``index``, when given, must be the index of ``documents`` (the same list)."""
        if index is None or index.documents is not documents:
            index = DocumentIndex(documents)
        self.index = index
        self.order: list[ObjectKey] = list(index.order)
        self.by_key: dict[ObjectKey, dict] = dict(index.by_key)
        self.owned: set[ObjectKey] = set()
        self.moved: set[ObjectKey] = set()
        self.removed: set[ObjectKey] = set()
        self.appended: list[ObjectKey] = []  # keys put at the end of ``order``, in order

    def writable(self, key: ObjectKey) -> dict:
        """The document at ``key``, copied first if it is still the baseline's."""
        if key not in self.owned:
            self.by_key[key] = copy.deepcopy(self.by_key[key])
            self.owned.add(key)
        return self.by_key[key]

    def put(self, doc: dict) -> None:
        """Add ``doc``, or replace the document of its key in place (one removed before
        comes back last, as a new object)."""
        key = key_of(doc)
        if key not in self.by_key:
            if key in self.order:  # removed by an earlier change
                self.order.remove(key)
                self.moved.add(key)
                if key in self.appended:
                    self.appended.remove(key)
            self.order.append(key)
            self.appended.append(key)
        self.by_key[key] = doc
        self.owned.add(key)

    def remove(self, key: ObjectKey) -> None:
        self.by_key.pop(key, None)
        self.removed.add(key)

    def delta(self) -> Delta | None:
        """How :meth:`documents` differs from the baseline's list, found from the keys the
        edits touched rather than by scanning both lists (tens of thousands of documents
        on a large cluster; ``scenarios/fork.py`` asks on every drop), or None when a
        scan must answer (a baseline document put back under a key: never done by the
        operations), or the baseline has two documents of one key. A test holds it equal
        to the scan."""
        index, by_key = self.index, self.by_key
        if index.shadowed:
            return None
        appended = set(self.appended)
        # with no key twice, a key's place in ``order`` is its document's in the list
        stayed = sorted((k for k in self.owned if k in by_key and k not in appended),
                        key=index.at.__getitem__)
        keys = [*stayed, *(k for k in self.appended if k in by_key)]
        if any(by_key[k] is index.by_key.get(k) for k in keys):
            return None
        gone = sorted(index.at[k] for k in self.owned | self.removed
                      if k in index.at and by_key.get(k) is not index.by_key[k])
        return Delta(index.documents, [by_key[k] for k in keys], gone)

    def of_kind(self, kind: str) -> list[ObjectKey]:
        return [k for k in self.order if k.kind == kind and k in self.by_key]

    def documents(self) -> list[dict]:
        by_key = self.by_key
        if all(k in by_key for k in self.removed):
            # every key of ``order`` has its document (only a removal leaves a key without
            # one): looked up without a test per key, on every drop of a large cluster
            return list(map(by_key.__getitem__, self.order))
        return [by_key[k] for k in self.order if k in by_key]


def unbind(docs: Documents, key: ObjectKey) -> None:
    """Unbind a pod and drop the reservations its claims hold for it."""
    pod = docs.writable(key)
    (pod.get("spec") or {}).pop("nodeName", None)
    pod.pop("status", None)
    (pod.get("metadata") or {}).get("annotations", {}).pop(EXPLAIN_ANNOTATION, None)
    namespace, name = key.namespace, key.name
    # A claim still the baseline's is among the index's; one an earlier change copied or
    # added is looked at itself. Each claim is edited on its own, so the order is moot.
    candidates = dict.fromkeys(docs.index.reserving(namespace, name))
    candidates.update(dict.fromkeys(k for k in docs.owned if k.kind == "ResourceClaim"))
    for claim_key in candidates:
        if claim_key.namespace != namespace or claim_key not in docs.by_key:
            continue
        reserved = ((docs.by_key[claim_key].get("status") or {}).get("reservedFor")) or []
        if any(r.get("resource") == "pods" and r.get("name") == name for r in reserved):
            claim = docs.writable(claim_key)
            status = claim["status"]
            status["reservedFor"] = [r for r in reserved if not (
                r.get("resource") == "pods" and r.get("name") == name)]
            if not status["reservedFor"]:
                del status["reservedFor"]
                if is_v1_claim(claim):
                    deallocate_v1(claim)


def is_v1_claim(doc: dict) -> bool:
    return doc.get("apiVersion") in kinds.RESOURCE_CLAIM_V1.api_versions


def deallocate_v1(claim: dict) -> None:
    """A v1 claim no pod uses any more loses its allocation and finalizer, as the
    resourceclaim controller deallocates it (the seed's claim controller does the same for
    seed claims when it runs; docs/scenarios.md)."""
    (claim.get("status") or {}).pop("allocation", None)
    meta = claim.get("metadata") or {}
    meta["finalizers"] = [f for f in meta.get("finalizers") or () if f != V1_CLAIM_FINALIZER]
    if not meta["finalizers"]:
        del meta["finalizers"]
