"""Loading manifests: read, validate every document completely, then build engine objects.

Either every document is valid and :func:`load_files` returns the objects, or it raises
:class:`InvalidManifests` carrying every problem in every document, in input order.

Documents of the resource.k8s.io/v1 kinds (any served version) are first converted to v1,
stripped of the fields of disabled feature gates (each a warning on the result) and
defaulted, as the API server does, under a Kubernetes profile (docs/v1.md); so are the v1
slice specs of a NodeGroup (``v1_node_groups``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from allocation.engine import kinds
from allocation.engine.constants import ADMIN_ACCESS_LABEL, OWN_GROUPS
from allocation.engine.gcpause import paused_gc
from allocation.engine.manifests.common import metadata_schema
from allocation.engine.manifests.kinds import schema_of
from allocation.engine.manifests.lists import list_item, list_items
from allocation.engine.manifests.problems import InvalidManifests, Problem, ProblemList
from allocation.engine.manifests.reader import RawDocument, read_text
from allocation.engine.manifests.schema import join, suggest
from allocation.engine.manifests.semantics import check_document
from allocation.engine.manifests.uids import duplicate_uids
from allocation.engine.manifests.unsimulated import (
    field_pattern,
    gathered,
    unsimulated_fields,
    unsimulated_kind,
)
from allocation.engine.manifests.v1_convert import is_v1_kind, prepare, source_path
from allocation.engine.manifests.v1_node_groups import check_v1_slices, prepare_node_group
from allocation.engine.manifests.v1_rules import admin_access_paths, check_v1_document
from allocation.engine.objects import (
    KIND_CLASSES,
    KObject,
    OpaqueObject,
    Pod,
    PodTemplate,
    Source,
)
from allocation.engine.v1.features import Profile, make_profile

__all__ = ["LoadResult", "load_documents", "load_files", "load_texts", "build_object",
           "cluster_problems"]


@dataclass
class LoadResult:
    """Valid objects in input order, the Events given in the input, and warnings: one per
    field dropped because its feature gate is off, in the problem format (for stderr)."""

    objects: list[KObject] = field(default_factory=list)
    events: list[OpaqueObject] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    profile: Profile | None = None
    """The Kubernetes profile the documents were loaded under; the simulation schedules
    under the same one (``ClusterState.profile``)."""


_SCHEDULED = (Pod, PodTemplate)  # checked per object by exact type: a tuple scan


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


def _validate(data: Any, problems: ProblemList, profile: Profile) -> None:
    if not isinstance(data, dict):
        problems.add("", "a document must be an object with apiVersion, kind and metadata")
        return
    api_version, kind = data.get("apiVersion"), data.get("kind")
    for field_name, value in (("apiVersion", api_version), ("kind", kind)):
        if not isinstance(value, str) or not value:
            problems.add(field_name, "required field is missing")
    if problems:
        return
    spec = kinds.lookup(api_version, kind)
    if spec is None:
        _validate_unknown(data, api_version, kind, problems)
        return
    before = len(problems)
    schema = schema_of(spec)
    if not schema.valid(data):  # the problems of an invalid document, in full (schema.py)
        schema.check(data, "", problems)
    if spec in kinds.V1_KIND_SET:
        # v1 rules assume the schema's shapes (they compile CEL, parse quantities).
        if len(problems) == before:
            check_v1_document(kind, data, profile, problems)
        return
    # Cross-field rules too, so every problem is reported at once; if the structure is
    # broken the schema has already reported why.
    with contextlib.suppress(KeyError, TypeError, AttributeError, ValueError):
        check_document(kind, data, problems)
        if spec is kinds.NODE_GROUP:
            check_v1_slices(data, profile, problems)


def _validate_unknown(data: dict, api_version: str, kind: str, problems: ProblemList
                      ) -> None:
    """The problems of a document whose ``apiVersion`` and ``kind`` name no spec: an
    unknown kind of the planner's groups, a vendor object, or a version not served."""
    named = kinds.specs_named(kind)
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    if not named:
        if group in OWN_GROUPS and kind not in kinds.UNSIMULATED_KINDS.get(group, ()):
            ours = [*(spec.name for spec in kinds.specs_in_group(group)),
                    *sorted(kinds.UNSIMULATED_KINDS.get(group, ()))]
            problems.add("kind", f"unknown kind {kind!r} in {api_version}{suggest(kind, ours)}")
            return
        # A vendor object: only its metadata is the planner's to check (it names and keys
        # the object), as for every kind.
        if data.get("metadata") is None:
            problems.add("metadata.name", "required field is missing")
        else:
            _VENDOR_METADATA.check(data.get("metadata"), "metadata", problems)
        return
    supported = [v for named_spec in named for v in named_spec.api_versions]
    problems.add("apiVersion", f"{api_version!r} is not supported for {kind}; use "
                 f"{' or '.join(supported)}")


def build_object(data: dict, source: Source | None = None) -> KObject:
    """The engine object for one valid document."""
    spec = kinds.lookup(data.get("apiVersion"), data["kind"])
    cls = KIND_CLASSES.get(spec) if spec is not None else None
    if cls is not None:
        return cls(data, source)
    return OpaqueObject(data, source, namespaced=kinds.namespaced(data["kind"]) is not False)


def _expand(raw: RawDocument) -> Iterable[tuple[str, Any]]:
    data = raw.data
    items = list_items(data)
    if items is None:
        yield "", data
    elif not isinstance(items, list):
        yield "items", None
    else:
        for index, item in enumerate(items):
            yield f"items[{index}]", list_item(data, item)


def load_texts(texts: Sequence[tuple[str, str]], profile: Profile | None = None
               ) -> LoadResult:
    """Load ``(file name, text)`` pairs; raise :class:`InvalidManifests` on any problem.

    ``profile`` (default: the newest release, ``make_profile()``) decides which v1 fields
    are dropped for their feature gates and the limits that differ between releases."""
    return _load(((file_name, raw) for file_name, text in texts
                  for raw in read_text(text, json_hint=file_name.endswith(".json"))),
                 profile=profile)


def load_documents(documents: Iterable[tuple[str, Any]],
                   trusted: Callable[[Any], bool] | None = None,
                   profile: Profile | None = None) -> LoadResult:
    """Load already-parsed ``(source name, document)`` pairs (from a database, a scenario).

    Validation and problems are those of :func:`load_texts`; a document's number is its
    position among those with the same source name, from 1. Documents for which
    ``trusted`` is true were validated before (a stored baseline) and are not checked again
    (v1 documents are still converted and defaulted). ``profile`` as for :func:`load_texts`.
    """
    counters: dict[str, int] = {}

    def numbered():
        for name, data in documents:
            counters[name] = counters.get(name, 0) + 1
            yield name, RawDocument(counters[name], data)

    return _load(numbered(), trusted, profile)


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
          trusted: Callable[[Any], bool] | None = None,
          profile: Profile | None = None) -> LoadResult:
    # Reading and checking make hundreds of thousands of lists and objects and no cycles:
    # the collector would traverse them again and again (gcpause.py), a fifth of loading.
    with paused_gc():
        return _load_all(raws, trusted, profile)


def _load_all(raws: Iterable[tuple[str, RawDocument]],
              trusted: Callable[[Any], bool] | None,
              profile: Profile | None) -> LoadResult:
    profile = profile if profile is not None else make_profile()
    found: list[Problem] = []
    result = LoadResult(profile=profile)
    seen: dict[tuple, tuple[str, int]] = {}  # where each object was first defined
    # warned of after the loop, gathered: a field on every device of a slice, or on every
    # replica, is said a few times and then counted (unsimulated.gathered)
    dropped: list[tuple[str, Problem]] = []
    unsimulated: list[tuple[str, Problem]] = []
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
            if pending:
                pending = _take_problems(pending, prefix, problems)
            version = None
            if is_v1_kind(data):
                prepared = prepare(data, profile, owned=raw.fresh)
                data, version = prepared.data, prepared.original_version
                kind, namespace, name = _ident(data)
                dropped.extend(
                    (field_pattern(source_path(path, version)),
                     Problem(file_name, raw.doc, kind, namespace, name,
                             join(prefix, source_path(path, version)) if prefix else
                             source_path(path, version),
                             f"field dropped: feature gate {gate} is off in Kubernetes "
                             f"{profile.release}")) for path, gate in prepared.dropped)
            elif isinstance(data, dict) and data.get("kind") == kinds.NODE_GROUP.name:
                data, group_dropped = prepare_node_group(data, profile)  # its v1 slices
                kind, namespace, name = _ident(data)
                dropped.extend(
                    (field_pattern(path),
                     Problem(file_name, raw.doc, kind, namespace, name, join(prefix, path),
                             f"field dropped: feature gate {gate} is off in Kubernetes "
                             f"{profile.release}")) for path, gate in group_dropped)
            if trusted is None or not trusted(data):
                _validate(data, problems, profile)
            if problems:
                kind, namespace, name = _ident(data)
                for path, message in problems.items:
                    if version is not None:
                        path = source_path(path, version)
                    path = join(prefix, path) if prefix and path else (prefix or path)
                    found.append(Problem(file_name, raw.doc, kind, namespace, name, path,
                                         message))
                continue
            obj = build_object(data, Source(file_name, raw.doc))
            if obj.kind_name == "Event" and obj.api_version in ("v1", "events.k8s.io/v1"):
                result.events.append(obj)
                continue
            ident = (obj.api_version.split("/")[0] if isinstance(obj, OpaqueObject)
                     else "", obj.key)
            if ident in seen:
                kind, namespace, name = _ident(data)
                first_file, first_doc = seen[ident]
                found.append(Problem(file_name, raw.doc, kind, namespace, name,
                                     "metadata.name", f"duplicate object: {obj.key} is "
                                     f"also defined at {first_file}:{first_doc}"))
                continue
            seen[ident] = (file_name, raw.doc)
            result.objects.append(obj)
            if type(obj) is OpaqueObject and obj.api_group in OWN_GROUPS:  # a kind not
                # simulated (UNSIMULATED_KINDS): said once per object
                kind, namespace, name = _ident(data)
                unsimulated.append(("kind", Problem(
                    file_name, raw.doc, kind, namespace, name, join(prefix, "kind"),
                    unsimulated_kind(kind, profile))))
            elif type(obj) in _SCHEDULED:  # a filter the planner does not run, said
                fields = unsimulated_fields(data)  # none for most pods: nothing more
                if fields:
                    kind, namespace, name = _ident(data)
                    unsimulated.extend(
                        (path, Problem(file_name, raw.doc, kind, namespace, name,
                                       join(prefix, path) if prefix else path, message))
                        for path, message in fields)
        # What is wrong with a List around its items (a duplicate "items" key, say).
        found.extend(Problem(file_name, raw.doc, "List", None, None, path, message)
                     for path, message in pending)
    found.extend(cluster_problems(result.objects))
    if found:
        raise InvalidManifests(found)
    result.warnings.extend(gathered(dropped))
    result.warnings.extend(gathered(unsimulated))
    return result


def cluster_problems(objects: list[KObject]) -> list[Problem]:
    """What is wrong with ``objects`` together though each is valid alone: admin access
    without the namespace's label, a ``metadata.uid`` two objects share.

    Returns:
        The problems, in the format of every loading problem (empty when none).
    """
    return _admin_access(objects) + duplicate_uids(objects)


def _admin_access(objects: list[KObject]) -> list[Problem]:
    """adminAccess needs the claim's Namespace labelled ``resource.kubernetes.io/
    admin-access: "true"``; the API server refuses the claim otherwise (KEP-5018). A
    namespace not given in the input has no labels."""
    allowed = {obj.name for obj in objects if obj.api_version == "v1"
               and obj.kind_name == kinds.NAMESPACE.name
               and obj.meta.labels.get(ADMIN_ACCESS_LABEL) == "true"}
    found = []
    for obj in objects:
        if obj.kind_spec not in kinds.V1_KIND_SET or obj.namespace in allowed:
            continue
        for path in admin_access_paths(obj.kind_name, obj.raw):
            source = obj.source or Source("", 0)
            found.append(Problem(source.file, source.doc, obj.kind_name, obj.namespace,
                                 obj.name, path, "admin access to devices requires the "
                                 f"`{ADMIN_ACCESS_LABEL}: true` label on the namespace "
                                 f"{obj.namespace!r}"))
    return found


def load_files(paths: Iterable[str | Path], profile: Profile | None = None) -> LoadResult:
    """Load manifest files; a file that cannot be read is a problem like any other.
    ``profile`` as for :func:`load_texts`."""
    texts: list[tuple[str, str]] = []
    unreadable: list[Problem] = []
    for path in paths:
        try:
            texts.append((str(path), Path(path).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            unreadable.append(Problem(str(path), 0, "", None, None, "", f"cannot read: {exc}"))
    try:
        result = load_texts(texts, profile)
    except InvalidManifests as exc:
        raise InvalidManifests(unreadable + exc.problems) from None
    if unreadable:
        raise InvalidManifests(unreadable)
    return result

