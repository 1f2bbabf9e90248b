"""YAML text to plain documents, built iteratively from the parser's events, within bounds.

PyYAML's own composer recurses once per nesting level in C (a list nested 100,000 deep kills
the process with a segmentation fault) and follows aliases without looking (``&a [*a]``
loops, and a 96 KB "billion laughs" text expands to gigabytes). This builder consumes libyaml's
event stream with an explicit stack instead, and enforces while it reads, never after:

- nesting at most :data:`~allocation.engine.manifests.limits.MAX_NESTING_DEPTH` deep;
- no alias inside the node it names (a recursive alias);
- the document at most 4 MiB and a million nodes *once every alias is expanded*.

It also reports what PyYAML accepts silently, as problems at the field's path: a key given
twice (usually two objects with no ``---`` between them), and keys that are not strings
(``5: x``, ``~: x``, ``true: x``: Kubernetes keys are strings).

Scalars are resolved exactly as PyYAML's SafeLoader does (YAML 1.1: ``yes`` is true,
``0o7``, ``1_000``, merge keys ``<<``), so documents are the same as before, except a
timestamp, kept as its text, and ``!!binary`` data, decoded to text, as kubectl reads them
(``yaml_loader.kube_loader``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from allocation.engine.manifests.flow_depth import cap_flow_depth
from allocation.engine.manifests.limits import (
    MAX_DOCUMENT_BYTES,
    MAX_EXPANDED_NODES,
    MAX_NESTING_DEPTH,
)
from allocation.engine.manifests.yaml_fast import fast_documents
from allocation.engine.manifests.yaml_loader import kube_loader

__all__ = ["YamlDocument", "YamlLimitError", "iter_yaml_documents"]

_Loader = kube_loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader))
_SCALAR, _MAPPING_START, _MAPPING_END, _SEQUENCE_START, _SEQUENCE_END = (
    yaml.ScalarEvent, yaml.MappingStartEvent, yaml.MappingEndEvent, yaml.SequenceStartEvent,
    yaml.SequenceEndEvent)
# Deeper than the builder's bound, so the builder still names the path and line; shallow
# enough that libyaml's cost per token stays small (flow_depth.py).
_FLOW_DEPTH_CUT = 4 * MAX_NESTING_DEPTH

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_SEQ_TAGS = frozenset({None, "!", "tag:yaml.org,2002:seq"})
_MAP_TAGS = frozenset({None, "!", "tag:yaml.org,2002:map"})
_OPEN = object()
_PATH_SHOWN = 12  # an anchor whose node is still being read
_CACHED = 65536  # distinct plain scalars whose tag (and short strings whose object) is kept
_SHARED_LENGTH = 64


@dataclass(slots=True)
class YamlDocument:
    """One document: its number (from 1), its data, and what was wrong with it.

    ``fatal`` (with ``path`` and ``line``) means the document could not be built at all;
    ``data`` then holds whatever was read before, for naming the object. ``problems`` are
    ``(field path, message)`` pairs found in an otherwise usable document.
    """

    doc: int
    data: Any = None
    fatal: str | None = None
    path: str = ""
    problems: list[tuple[str, str]] = field(default_factory=list)


class YamlLimitError(Exception):
    """A document broke a bound; carries the message and the line (from 1)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class _Frame:
    """A list or object being read: its value, where it stands, and its expanded size."""

    __slots__ = ("value", "is_map", "anchor", "key", "has_key", "key_line", "merges",
                 "nodes", "size", "line")

    def __init__(self, value: Any, is_map: bool, anchor: str | None, line: int) -> None:
        self.value = value
        self.is_map = is_map
        self.anchor = anchor
        self.has_key = False
        self.key: Any = None
        self.key_line = 0
        self.merges: list[dict] | None = None
        self.nodes = 1
        self.size = 2
        self.line = line


class _MergeKey:
    """The ``<<`` merge key while its object is read (never stored)."""

    def __repr__(self) -> str:
        return "<<"


_MERGE_KEY = _MergeKey()


# the non-text scalars a key can be (a timestamp and binary data are read as text)
_KEY_TYPES = {bool: "a boolean", int: "an integer", float: "a number"}


def _describe_key(key: Any) -> str:
    if key is None:
        return "null (~)"
    if isinstance(key, list | dict):
        return "a list or object"
    return f"{_KEY_TYPES.get(type(key), type(key).__name__)} ({key})"


class _Builder:
    """Builds one document at a time from events; see the module docstring."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.constructors = loader.yaml_constructors
        self.stack: list[_Frame] = []
        self.anchors: dict[str, Any] = {}
        self.root: Any = None
        self.nodes = 0
        self.size = 0
        self.aliased = False
        self.problems: list[tuple[str, str]] = []
        self.tags: dict[str, str] = {}  # kept across documents, bounded by _CACHED
        self.strings: dict[str, str] = {}

    # -- where we are -------------------------------------------------------------------
    def path(self, extra: Any = None) -> str:
        """The field path of the value being read (plus ``extra`` below it)."""
        parts: list[str] = []
        for frame in self.stack:
            if frame.is_map:
                if frame.has_key:
                    parts.append(f".{frame.key}" if parts else str(frame.key))
            else:
                parts.append(f"[{len(frame.value)}]")
        if extra is not None:
            parts.append(f".{extra}" if parts else str(extra))
        if len(parts) > _PATH_SHOWN:  # a path 64 levels deep says nothing more than this
            parts = parts[:_PATH_SHOWN] + [f"...({len(parts) - _PATH_SHOWN} levels more)"]
        return "".join(parts)

    def partial(self) -> Any:
        """What was read so far of the document (for naming its object)."""
        return self.stack[0].value if self.stack else self.root

    # -- events -------------------------------------------------------------------------
    def scalar(self, event: Any) -> None:
        value = event.value
        tag = event.tag
        if tag is None or tag == "!":
            if event.implicit[0]:
                # A plain scalar's tag depends on its text alone (SafeLoader has no path
                # resolvers); a cluster repeats the same keys and values thousands of times.
                tag = self.tags.get(value)
                if tag is None:
                    tag = self.loader.resolve(yaml.ScalarNode, value, event.implicit)
                    if len(self.tags) < _CACHED:
                        self.tags[value] = tag
            else:
                tag = _STR
        if tag == _STR and len(value) <= _SHARED_LENGTH:
            # One string object per distinct short text (keys above all): memory in
            # proportion to the cluster, not to the text read.
            value = self.strings.setdefault(value, value) if len(self.strings) < _CACHED \
                else self.strings.get(value, value)
        if tag != _STR:
            if tag == _MERGE and self.stack and self.stack[-1].is_map \
                    and not self.stack[-1].has_key:
                value = _MERGE_KEY
            else:
                value = self._construct(tag, event)
        size = len(event.value) + 2
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, 1, size)
        self.add(value, 1, size, event.start_mark.line + 1)

    def _construct(self, tag: str, event: Any) -> Any:
        constructor = self.constructors.get(tag)
        try:
            if constructor is None:
                raise ValueError(f"unsupported YAML tag {tag}")
            value = constructor(self.loader, yaml.ScalarNode(tag, event.value,
                                                             event.start_mark, event.end_mark))
        except (yaml.YAMLError, ValueError, OverflowError) as exc:
            text = " ".join(str(getattr(exc, "problem", None) or exc).split())
            if "integer string conversion" in text:
                text = "an integer with more than 4300 digits"
            self.problems.append((self.path(), f"invalid value at line "
                                  f"{event.start_mark.line + 1}: {text}"))
            return None
        if isinstance(value, float) and not math.isfinite(value):
            self.problems.append((self.path(), f"{event.value!r} at line "
                                  f"{event.start_mark.line + 1}: infinite and not-a-number "
                                  "values cannot be represented in Kubernetes objects"))
            return None
        return value

    def start(self, event: Any, is_map: bool) -> None:
        line = event.start_mark.line + 1
        if len(self.stack) >= MAX_NESTING_DEPTH:
            raise YamlLimitError(f"lists and objects are nested more than "
                                 f"{MAX_NESTING_DEPTH} levels deep at line {line}", line)
        allowed = _MAP_TAGS if is_map else _SEQ_TAGS
        if event.tag not in allowed:
            self.problems.append((self.path(), f"unsupported YAML tag {event.tag} at line "
                                  f"{line}: only plain lists and objects are allowed"))
        if event.anchor is not None:
            self.anchors[event.anchor] = _OPEN
        self.stack.append(_Frame({} if is_map else [], is_map, event.anchor, line))

    def end(self) -> None:
        frame = self.stack.pop()
        value = frame.value
        if frame.merges:
            merged: dict = {}
            for source in reversed(frame.merges):  # the first merge listed wins
                merged.update(source)
            merged.update(value)  # and the object's own keys win over every merge
            value = merged
        if frame.anchor is not None:
            self.anchors[frame.anchor] = (value, frame.nodes, frame.size)
        self.add(value, frame.nodes, frame.size, frame.line, counted=True)

    def alias(self, event: Any) -> None:
        line = event.start_mark.line + 1
        found = self.anchors.get(event.anchor)
        if found is None:
            raise YamlLimitError(f"found undefined alias *{event.anchor} at line {line}", line)
        if found is _OPEN:
            raise YamlLimitError(f"recursive alias *{event.anchor} at line {line}: it stands "
                                 f"inside the node it names", line)
        value, nodes, size = found
        self.aliased = True
        self.add(value, nodes, size, line)

    # -- placing a value ----------------------------------------------------------------
    def add(self, value: Any, nodes: int, size: int, line: int, counted: bool = False) -> None:
        # ``counted``: a closing list or object whose children were counted one by one.
        self.nodes += 1 if counted else nodes
        self.size += 2 if counted else size
        if self.nodes > MAX_EXPANDED_NODES:
            raise YamlLimitError(f"the document holds more than {MAX_EXPANDED_NODES} "
                                 "values once its aliases are expanded (an alias bomb?)", line)
        if self.aliased and self.size > MAX_DOCUMENT_BYTES:
            raise YamlLimitError(f"the document is larger than the {MAX_DOCUMENT_BYTES}-byte "
                                 "(4 MiB) limit once its aliases are expanded", line)
        if not self.stack:
            self.root = value
            return
        frame = self.stack[-1]
        frame.nodes += nodes
        frame.size += size + 1
        if not frame.is_map:
            frame.value.append(value)
        elif not frame.has_key:
            if type(value) is str:  # the common case of _key, inline: one call less per key
                frame.key = value
                frame.key_line = line
                frame.has_key = True
            else:
                self._key(frame, value, line)
        else:
            key = frame.key
            if key is not _MERGE_KEY and key not in frame.value:  # _value's common case
                frame.has_key = False
                frame.value[key] = value
            else:
                self._value(frame, value, line)

    def _key(self, frame: _Frame, key: Any, line: int) -> None:
        if key is not _MERGE_KEY and not isinstance(key, str):
            shown = ("<complex key>" if isinstance(key, list | dict)
                     else "~" if key is None else str(key))
            self.problems.append((self.path(shown), f"the key at line {line} is "
                                  f"{_describe_key(key)}, not a string; quote it"))
            key = shown
        frame.key = key
        frame.key_line = line
        frame.has_key = True

    def _value(self, frame: _Frame, value: Any, line: int) -> None:
        key = frame.key
        frame.has_key = False
        if key is _MERGE_KEY:
            sources = value if isinstance(value, list) else [value]
            if not all(isinstance(s, dict) for s in sources):
                self.problems.append((self.path("<<"), f"the merge key at line "
                                      f"{frame.key_line} needs an object or a list of objects"))
                return
            frame.merges = (frame.merges or []) + sources
            return
        if key in frame.value:
            self.problems.append((self.path(key), f"duplicate key {key!r} at line "
                                  f"{frame.key_line}; is a '---' missing between two objects?"))
            return
        frame.value[key] = value

    def reset(self) -> None:
        self.stack.clear()
        self.anchors.clear()
        self.root = None
        self.nodes = self.size = 0
        self.aliased = False
        self.problems = []


def _read_one(text: str) -> tuple[bool, Any]:
    """``(True, data)`` when ``text`` is one document read without a problem."""
    try:
        found = list(iter_yaml_documents(text, fast=False))
    except yaml.YAMLError:
        return False, None
    if len(found) != 1 or found[0].fatal is not None or found[0].problems:
        return False, None
    return True, found[0].data


def iter_yaml_documents(text: str, fast: bool = True) -> Iterator[YamlDocument]:
    """The documents of a YAML text, in order, each built within the bounds.

    Documents are numbered from 1, empty ones included (their data is None). A document
    that breaks a bound is yielded with ``fatal`` set and reading goes on with the next.
    Plain block-style text is read by ``yaml_fast`` (the same documents, read faster)
    unless ``fast`` is false; any other text, and any text with a problem, by libyaml.

    Raises:
        yaml.YAMLError: on a syntax error, after the documents before it were yielded; the
            caller reports it with the reader (``reader.py``) against the next number.
    """
    found = fast_documents(text, _read_one) if fast else None
    if found is not None:
        for number, data in enumerate(found, 1):
            yield YamlDocument(number, data)
        return
    # libyaml is quadratic in flow depth: refuse absurd depths before it reads them
    loader = _Loader(cap_flow_depth(text, _FLOW_DEPTH_CUT))
    builder = _Builder(loader)
    get_event, scalar, start_node, end_node = (loader.get_event, builder.scalar,
                                               builder.start, builder.end)
    doc = start = 0
    try:
        while True:
            event = get_event()
            kind = type(event)
            try:
                if kind is _SCALAR:
                    scalar(event)
                elif kind is _MAPPING_START:
                    start_node(event, True)
                elif kind is _MAPPING_END or kind is _SEQUENCE_END:
                    end_node()
                elif kind is _SEQUENCE_START:
                    start_node(event, False)
                elif kind is yaml.AliasEvent:
                    builder.alias(event)
                elif kind is yaml.DocumentStartEvent:
                    doc += 1
                    builder.reset()
                    start = event.start_mark.index
                elif kind is yaml.DocumentEndEvent:
                    size = event.end_mark.index - start
                    if size > MAX_DOCUMENT_BYTES:
                        yield YamlDocument(doc, builder.root, fatal=(
                            f"document is {size} bytes, larger than the "
                            f"{MAX_DOCUMENT_BYTES}-byte (4 MiB) limit"))
                    else:
                        yield YamlDocument(doc, builder.root, problems=builder.problems)
                elif kind is yaml.StreamEndEvent:
                    return
                # StreamStartEvent: nothing to do
            except YamlLimitError as exc:
                yield YamlDocument(doc, builder.partial(), fatal=exc.message,
                                   path=builder.path())
                # Skip the rest of the document without building (or counting) anything.
                while not isinstance(get_event(), yaml.DocumentEndEvent):
                    pass
                builder.reset()
    finally:
        loader.dispose()
