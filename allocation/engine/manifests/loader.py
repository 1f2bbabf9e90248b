"""Loading manifests: read, validate every document completely, then build engine objects.

Either every document is valid and :func:`load_files` returns the objects, or it raises
:class:`InvalidManifests` carrying every problem in every document, in input order.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from allocation.engine import kinds
from allocation.engine.constants import OWN_GROUPS
from allocation.engine.manifests.common import metadata_schema
from allocation.engine.manifests.kinds import schema_of
from allocation.engine.manifests.problems import InvalidManifests, Problem, ProblemList
from allocation.engine.manifests.reader import RawDocument, read_text
from allocation.engine.manifests.schema import join, suggest
from allocation.engine.manifests.semantics import check_document
from allocation.engine.objects import KIND_CLASSES, KObject, OpaqueObject, Source

__all__ = ["LoadResult", "load_documents", "load_files", "load_texts", "build_object"]


@dataclass
class LoadResult:
    """Valid objects in input order, and the Events given in the input."""

    objects: list[KObject] = field(default_factory=list)
    events: list[OpaqueObject] = field(default_factory=list)


def _ident(data: Any) -> tuple[str, str | None, str | None]:
    if not isinstance(data, dict):
        return "", None, None
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else data
    kind = data.get("kind") if isinstance(data.get("kind"), str) else ""
    name = meta.get("name") if isinstance(meta.get("name"), str) else None
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
    scoped = kinds.namespaced(kind)
    if scoped and namespace is None:
        namespace = "default"
    if scoped is False:
        namespace = None
    return kind, namespace, name


_VENDOR_METADATA = metadata_schema(namespaced=True)


def _validate(data: Any, problems: ProblemList) -> None:
    if not isinstance(data, dict):
        problems.add("", "a document must be an object with apiVersion, kind and metadata")
        return
    api_version, kind = data.get("apiVersion"), data.get("kind")
    for field_name, value in (("apiVersion", api_version), ("kind", kind)):
        if not isinstance(value, str) or not value:
            problems.add(field_name, "required field is missing")
    if problems:
        return
    named = kinds.specs_named(kind)
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    if not named:
        if group in OWN_GROUPS:
            ours = [spec.name for spec in kinds.specs_in_group(group)]
            problems.add("kind", f"unknown kind {kind!r} in {api_version}{suggest(kind, ours)}")
            return
        # A vendor object: only its metadata is the planner's to check (it names and keys
        # the object), as for every kind.
        if data.get("metadata") is None:
            problems.add("metadata.name", "required field is missing")
        else:
            _VENDOR_METADATA.check(data.get("metadata"), "metadata", problems)
        return
    spec = kinds.lookup(api_version, kind)
    if spec is None:
        supported = [v for named_spec in named for v in named_spec.api_versions]
        problems.add("apiVersion", f"{api_version!r} is not supported for {kind}; use "
                     f"{' or '.join(supported)}")
        return
    schema_of(spec).check(data, "", problems)
    # Cross-field rules too, so every problem is reported at once; if the structure is
    # broken the schema has already reported why.
    with contextlib.suppress(KeyError, TypeError, AttributeError, ValueError):
        check_document(kind, data, problems)


def build_object(data: dict, source: Source | None = None) -> KObject:
    """The engine object for one valid document."""
    spec = kinds.lookup(data.get("apiVersion"), data["kind"])
    cls = KIND_CLASSES.get(spec) if spec is not None else None
    if cls is not None:
        return cls(data, source)
    return OpaqueObject(data, source, namespaced=kinds.namespaced(data["kind"]) is not False)


def _expand(raw: RawDocument) -> Iterable[tuple[str, Any]]:
    data = raw.data
    if isinstance(data, dict) and data.get("kind") == "List" and "items" in data:
        items = data.get("items")
        if not isinstance(items, list):
            yield "items", None
            return
        for index, item in enumerate(items):
            yield f"items[{index}]", item
    else:
        yield "", data


def load_texts(texts: Sequence[tuple[str, str]]) -> LoadResult:
    """Load ``(file name, text)`` pairs; raise :class:`InvalidManifests` on any problem."""
    return _load((file_name, raw) for file_name, text in texts
                 for raw in read_text(text, json_hint=file_name.endswith(".json")))


def load_documents(documents: Iterable[tuple[str, Any]],
                   trusted: Callable[[Any], bool] | None = None) -> LoadResult:
    """Load already-parsed ``(source name, document)`` pairs (from a database, a scenario).

    Validation and problems are those of :func:`load_texts`; a document's number is its
    position among those with the same source name, from 1. Documents for which
    ``trusted`` is true were validated before (a stored baseline) and are not checked again.
    """
    counters: dict[str, int] = {}

    def numbered():
        for name, data in documents:
            counters[name] = counters.get(name, 0) + 1
            yield name, RawDocument(counters[name], data)

    return _load(numbered(), trusted)


def _take_problems(pending: list[tuple[str, str]], prefix: str,
                   problems: ProblemList) -> list[tuple[str, str]]:
    """Move the reader's problems at or below ``prefix`` into ``problems`` (paths relative
    to it); return the others. With no prefix (a whole document) every problem is taken."""
    rest: list[tuple[str, str]] = []
    for path, message in pending:
        if not prefix:
            problems.add(path, message)
        elif path == prefix or path.startswith((prefix + ".", prefix + "[")):
            problems.add(path[len(prefix):].lstrip("."), message)
        else:
            rest.append((path, message))
    return rest


def _load(raws: Iterable[tuple[str, RawDocument]],
          trusted: Callable[[Any], bool] | None = None) -> LoadResult:
    found: list[Problem] = []
    result = LoadResult()
    seen: dict[tuple, str] = {}
    for file_name, raw in raws:
        if raw.error is not None:
            hint = raw.hint or {}
            kind, namespace, name = _ident(hint)
            found.append(Problem(file_name, raw.doc, hint.get("kind", ""),
                                 namespace or hint.get("namespace"), hint.get("name"),
                                 raw.path, raw.error))
            continue
        pending = list(raw.problems)
        for prefix, data in _expand(raw):
            problems = ProblemList()
            pending = _take_problems(pending, prefix, problems)
            if trusted is None or not trusted(data):
                _validate(data, problems)
            kind, namespace, name = _ident(data)
            for path, message in problems.items:
                path = join(prefix, path) if prefix and path else (prefix or path)
                found.append(Problem(file_name, raw.doc, kind, namespace, name, path,
                                     message))
            if problems:
                continue
            obj = build_object(data, Source(file_name, raw.doc))
            if obj.kind_name == "Event" and obj.api_version in ("v1", "events.k8s.io/v1"):
                result.events.append(obj)
                continue
            ident = (obj.api_version.split("/")[0] if isinstance(obj, OpaqueObject)
                     else "", obj.key)
            where = f"{file_name}:{raw.doc}"
            if ident in seen:
                found.append(Problem(file_name, raw.doc, kind, namespace, name,
                                     "metadata.name", f"duplicate object: {obj.key} is "
                                     f"also defined at {seen[ident]}"))
                continue
            seen[ident] = where
            result.objects.append(obj)
        # What is wrong with a List around its items (a duplicate "items" key, say).
        found.extend(Problem(file_name, raw.doc, "List", None, None, path, message)
                     for path, message in pending)
    if found:
        raise InvalidManifests(found)
    return result


def load_files(paths: Iterable[str | Path]) -> LoadResult:
    """Load manifest files; a file that cannot be read is a problem like any other."""
    texts: list[tuple[str, str]] = []
    unreadable: list[Problem] = []
    for path in paths:
        try:
            texts.append((str(path), Path(path).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            unreadable.append(Problem(str(path), 0, "", None, None, "", f"cannot read: {exc}"))
    try:
        result = load_texts(texts)
    except InvalidManifests as exc:
        raise InvalidManifests(unreadable + exc.problems) from None
    if unreadable:
        raise InvalidManifests(unreadable)
    return result

