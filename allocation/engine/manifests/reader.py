"""Reading YAML and JSON files into plain documents, safely and within bounds.

YAML goes through :mod:`~allocation.engine.manifests.yaml_documents` (libyaml's events,
built without recursion); JSON through the standard library's C decoder with a duplicate-key
hook and a depth check. Either way, every bound of
:mod:`~allocation.engine.manifests.limits` holds before anything else sees a document: a
document too large, too deep, or (through aliases) too large once expanded is refused with a
clear message, and a duplicate or non-string key is a problem at its field.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import yaml

from allocation.engine.manifests.limits import (
    MAX_DOCUMENT_BYTES,
    MAX_EXPANDED_NODES,
    MAX_FILE_BYTES,
    MAX_NESTING_DEPTH,
)
from allocation.engine.manifests.lists import list_items
from allocation.engine.manifests.yaml_documents import iter_yaml_documents

__all__ = ["RawDocument", "read_text", "read_json_value", "MAX_DOCUMENT_BYTES",
           "MAX_EXPANDED_NODES", "MAX_NESTING_DEPTH", "DocumentError"]


def _yaml_error_message(exc: yaml.YAMLError) -> str:
    """One line for a YAML syntax error: where, what, and in which construct.

    PyYAML's own ``str()`` spans several lines and names the input ``"<unicode string>"``.
    """
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
    message = f"invalid YAML{where}: {problem}"
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if context:
        message += f" ({context}"
        if context_mark is not None and (mark is None or context_mark.line != mark.line):
            message += f" at line {context_mark.line + 1}"
        message += ")"
    if "mapping values are not allowed" in problem:
        message += "; a plain value containing ': ' or ending in ':' must be quoted"
    return message


@dataclass(slots=True)
class RawDocument:
    """One document of a file: its number (from 1) and content, or why it cannot be read.

    For a document that cannot be read at all (``error``, at ``path``), ``hint`` holds the
    kind, namespace and name found in it, so the problem can still name the object.
    ``problems`` are ``(field path, message)`` pairs found while reading a usable document
    (a duplicate key, a key that is not a string); the loader reports them with the rest.
    ``fresh``: no part of ``data`` is held elsewhere or appears twice in it (read from JSON,
    or from YAML without an alias), so the loader may change it in place rather than copy.
    """

    doc: int
    data: Any = None
    error: str | None = None
    hint: dict | None = None
    path: str = ""
    problems: list[tuple[str, str]] = field(default_factory=list)
    fresh: bool = False


class DocumentError(ValueError):
    """A JSON value outside the bounds; ``path`` is the field where it was found."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.path = path


_KIND = re.compile(r"^kind:\s*([A-Za-z0-9]+)\s*$", re.M)
_METADATA = re.compile(r"^metadata:[ \t\r]*(?:#.*)?$", re.M)
_META_FIELD = re.compile(r"( +)(name|namespace):[ \t]*([^\s#]+)")


def _metadata_hint(segment: str) -> dict[str, str]:
    """``metadata.name`` and ``.namespace`` of a block-YAML document's text, read line by
    line at the first indentation under ``metadata:`` (a regular expression spanning the
    lines backtracked exponentially on a long metadata block)."""
    found: dict[str, str] = {}
    head = _METADATA.search(segment)
    if head is None:
        return found
    indent = None
    for line in segment[head.end():].split("\n")[1:]:
        if not line.strip():
            continue
        if not line.startswith(" "):
            break
        depth = len(line) - len(line.lstrip(" "))
        indent = depth if indent is None else indent
        match = _META_FIELD.match(line) if depth == indent else None
        if match:
            found.setdefault(match.group(2), match.group(3).strip("'\""))
    return found


def _hint_from_text(text: str, index: int) -> dict | None:
    """Kind, name and namespace found in the text of the document around ``index``."""
    starts = [m.end() for m in re.finditer(r"^---[^\n]*\n", text, re.M) if m.end() <= index]
    start = starts[-1] if starts else 0
    end = re.compile(r"^---", re.M).search(text, index)
    segment = text[start:end.start() if end else len(text)]
    found = _metadata_hint(segment)
    if kind := _KIND.search(segment):
        found["kind"] = kind.group(1)
    return found or None


def _hint_from_data(data: Any) -> dict | None:
    """Kind, name and namespace from (part of) a document, if they are plain strings."""
    if not isinstance(data, dict):
        return None
    meta = data.get("metadata")
    found = {"kind": data.get("kind")}
    if isinstance(meta, dict):
        found.update(name=meta.get("name"), namespace=meta.get("namespace"))
    found = {k: v for k, v in found.items() if isinstance(v, str)}
    return found or None


def _read_yaml(text: str) -> Iterator[RawDocument]:
    doc = 0
    # Only an alias (``*name``) makes one node appear twice: without a ``*`` anywhere in the
    # text every document is a tree of its own.
    fresh = "*" not in text
    try:
        for found in iter_yaml_documents(text):
            doc = found.doc
            if found.fatal is not None:
                yield RawDocument(doc, error=found.fatal, path=found.path,
                                  hint=_hint_from_data(found.data))
            else:
                yield RawDocument(doc, data=found.data, problems=found.problems, fresh=fresh)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        hint = _hint_from_text(text, mark.index) if mark is not None else None
        yield RawDocument(doc + 1, error=_yaml_error_message(exc), hint=hint)


def _no_constant(name: str) -> Any:
    raise DocumentError(f"{name} is not a JSON number Kubernetes accepts")


def _check_json(value: Any, duplicates: dict[int, tuple[dict, list[str]]]
                ) -> list[tuple[str, str]]:
    """Depth and number bounds of a decoded JSON value; its duplicate keys as problems.

    Raises:
        DocumentError: the value is nested too deep or holds a number out of range.
    """
    problems: list[tuple[str, str]] = []
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        current, path, depth = stack.pop()
        if isinstance(current, dict):
            if depth >= MAX_NESTING_DEPTH:
                raise DocumentError(f"lists and objects are nested more than "
                                    f"{MAX_NESTING_DEPTH} levels deep", path)
            _, dups = duplicates.get(id(current), (None, ()))
            for key in dups:
                problems.append((f"{path}.{key}" if path else key,
                                 f"duplicate key {key!r}; the last value would win silently"))
            stack.extend((v, f"{path}.{k}" if path else k, depth + 1)
                         for k, v in current.items() if isinstance(v, dict | list | float))
        elif isinstance(current, list):
            if depth >= MAX_NESTING_DEPTH:
                raise DocumentError(f"lists and objects are nested more than "
                                    f"{MAX_NESTING_DEPTH} levels deep", path)
            stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(current)
                         if isinstance(v, dict | list | float))
        elif isinstance(current, float) and not math.isfinite(current):
            raise DocumentError("a number out of range (beyond the largest float)", path)
    problems.sort()
    return problems


_SLOW = object()
_INT_AS_FLOAT = 2.0 ** 63  # orjson reads integers outside 64 bits as floats


def _read_json_fast(text: str) -> Any:
    """The value through orjson when it is certainly what the standard library reads and
    has nothing to report; else ``_SLOW`` (the standard library then reads it and says
    what is wrong, in its words).

    A duplicate key would be lost silently, so the keys read must account for every ``:``
    of the text: colons stand only after keys and inside strings, so equal counts mean no
    string holds one and no key was given twice.
    """
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return _SLOW
    try:
        keys = _keys_within_bounds([value], -1)  # the value itself at depth 0
    except _OutOfBounds:
        return _SLOW
    return value if text.count(":") == keys else _SLOW


class _OutOfBounds(Exception):
    """A value orjson read that the standard library must read and report."""


def _keys_within_bounds(value: Any, depth: int) -> int:
    """The number of keys in ``value`` (a list or an object at ``depth``), checking every
    bound on the way: nesting within ``MAX_NESTING_DEPTH``, every float within 64-bit
    integers. One call per list or object: the scalars, nearly every value, are only
    looked at by type.

    Raises:
        _OutOfBounds: a bound does not hold.
    """
    if depth >= MAX_NESTING_DEPTH:
        raise _OutOfBounds
    if type(value) is dict:
        keys = len(value)
        children = value.values()
    else:
        keys = 0
        children = value
    for child in children:
        kind = type(child)
        if kind is dict or kind is list:
            keys += _keys_within_bounds(child, depth + 1)
        elif kind is float and not -_INT_AS_FLOAT < child < _INT_AS_FLOAT:
            raise _OutOfBounds
    return keys


def read_json_value(text: str) -> tuple[Any, list[tuple[str, str]]]:
    """One JSON value within the bounds, and its duplicate keys as ``(path, message)``.

    Raises:
        DocumentError: invalid JSON, nested too deep, or a number out of range; the message
            says which and where.
    """
    value = _read_json_fast(text)
    if value is not _SLOW:
        return value, []
    # Objects with a key given twice, by id; the objects are kept so no id is reused.
    duplicates: dict[int, tuple[dict, list[str]]] = {}

    def pairs(items: list[tuple[str, Any]]) -> dict:
        result = dict(items)
        if len(result) != len(items):
            seen: set[str] = set()
            duplicates[id(result)] = (result, [k for k, _ in items
                                               if k in seen or seen.add(k)])
        return result

    try:
        value = json.loads(text, object_pairs_hook=pairs, parse_constant=_no_constant)
    except RecursionError:
        raise DocumentError(f"lists and objects are nested more than {MAX_NESTING_DEPTH} "
                            "levels deep") from None
    except DocumentError:
        raise
    except json.JSONDecodeError as exc:
        raise DocumentError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: "
                            f"{exc.msg}") from None
    except ValueError as exc:  # an integer with more than 4,300 digits
        message = str(exc)
        if "integer string conversion" in message:
            message = "an integer with more than 4300 digits"
        raise DocumentError(f"invalid JSON: {message}") from None
    problems = _check_json(value, duplicates)  # (duplicates are known by the dicts' ids)
    if _SURROGATE_ESCAPE.search(text):  # orjson refused it; json keeps a lone surrogate
        value = _without_lone_surrogates(value)
        problems = _without_lone_surrogates(problems)
    return value, problems


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_lone_surrogates(value: Any) -> Any:
    """``value`` with each lone surrogate (``"\\ud800"``, no text in UTF-8) read as U+FFFD,
    as Go's encoding/json reads it; a pair is one character already."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list | tuple):
        return type(value)(_without_lone_surrogates(item) for item in value)
    if isinstance(value, dict):
        return {_without_lone_surrogates(k): _without_lone_surrogates(v)
                for k, v in value.items()}
    return value


_JSON_KIND = re.compile(r'"kind"\s*:\s*"([A-Za-z0-9]+)"')
_JSON_NAME = re.compile(r'"name"\s*:\s*"([^"\\]{1,253})"')
_JSON_NS = re.compile(r'"namespace"\s*:\s*"([^"\\]{1,63})"')


def _hint_from_json_text(text: str) -> dict | None:
    """Kind, name and namespace as they first appear in JSON text that could not be read."""
    head = text[:65536]
    found = {k: m.group(1) for k, rx in (("kind", _JSON_KIND), ("name", _JSON_NAME),
                                         ("namespace", _JSON_NS)) if (m := rx.search(head))}
    return found or None


def _size_over_limit(item: Any) -> int | None:
    """The size of ``item`` as compact JSON (``json.dumps``, ASCII only) if it is larger
    than ``MAX_DOCUMENT_BYTES``, else None. orjson writes the same text in UTF-8, at least
    a sixth of that size (a character escaped as ``\\u007f`` is one byte there), about ten
    times faster: a List's items, nearly all far below the limit, are sized that way."""
    try:
        if len(orjson.dumps(item)) * 6 <= MAX_DOCUMENT_BYTES:
            return None
    except TypeError:  # an integer beyond 64 bits (orjson's JSONEncodeError)
        pass
    size = len(json.dumps(item, separators=(",", ":")).encode())
    return size if size > MAX_DOCUMENT_BYTES else None


def _read_json(text: str) -> list[RawDocument]:
    try:
        data, problems = read_json_value(text)
    except DocumentError as exc:
        return [RawDocument(1, error=exc.message, path=exc.path,
                            hint=_hint_from_json_text(text))]
    if len(text.encode()) > MAX_DOCUMENT_BYTES:
        # A List may be larger than one document; each of its items may not.
        items = list_items(data)
        if not isinstance(items, list):
            return [RawDocument(1, error=f"document is {len(text.encode())} bytes, larger "
                                f"than the {MAX_DOCUMENT_BYTES}-byte (4 MiB) limit",
                                hint=_hint_from_data(data))]
        for index, item in enumerate(items):
            size = _size_over_limit(item)
            if size is not None:
                return [RawDocument(1, error=f"items[{index}] is {size} bytes, larger than "
                                    f"the {MAX_DOCUMENT_BYTES}-byte (4 MiB) limit",
                                    path=f"items[{index}]", hint=_hint_from_data(item))]
    return [RawDocument(1, data=data, problems=problems, fresh=True)]


def read_text(text: str, json_hint: bool = False) -> list[RawDocument]:
    """The documents of one file's text (YAML with ``---`` separators, or JSON).

    Never raises for any text: what cannot be read is a document with ``error``.
    """
    if len(text) > MAX_FILE_BYTES:
        return [RawDocument(1, error=f"the input is {len(text.encode())} bytes, larger than "
                            f"the {MAX_FILE_BYTES // 2**20} MiB limit")]
    stripped = text.lstrip()
    if json_hint or stripped.startswith(("{", "[")):
        documents = _read_json(text)
        if documents[0].error is None or json_hint or not stripped.startswith("{") \
                or not documents[0].error.startswith("invalid JSON"):
            return documents
        # "{a: b}" is YAML flow style, not JSON: read it as YAML.
    return [d for d in _read_yaml(text) if d.data is not None or d.error is not None
            or d.problems]
