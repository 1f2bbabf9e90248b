"""Writing objects back as YAML or JSON, deterministically (sorted keys, stable layout).

YAML goes through a small emitter of our own for plain data (dicts, lists, strings, numbers,
booleans, null): PyYAML's representer writes about 2 MB/s, too slow for a cluster of a few
thousand pods. Strings are written plain only when YAML would read them back as the same
string; everything else is double-quoted with JSON escapes (valid YAML). A property test
checks that ``yaml.safe_load(dump(x)) == x``. (libyaml's ``CSafeDumper`` is not a
replacement: it quotes with ``'`` where this writes ``"``, so every output would change.)

JSON goes through orjson, which writes the same bytes as ``json.dumps(indent=2,
sort_keys=True, ensure_ascii=False)`` about thirty times faster, except where the two
differ: integers beyond 64 bits, keys that are not strings, lone surrogates (orjson refuses
them), floats below 1e-4 (``1e-7`` for ``1e-07``) and NaN or infinities (``null``). A
document with any of those is written by the standard library instead, so the text never
depends on which encoder wrote it (docs/architecture.md, "Speed").
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice
from typing import Any

import orjson
import yaml

__all__ = ["dump", "dump_to", "dump_list_to", "as_list", "to_json", "to_yaml", "not_json"]

_PLAIN = re.compile(r"^[A-Za-z0-9_./(][A-Za-z0-9_./=+() -]*(?<! )$")
_RESOLVER = yaml.resolver.Resolver()
# Characters YAML does not print as they are (or reads as line breaks): escape them.
_UNPRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def as_list(items: list[dict]) -> dict:
    """A ``v1`` List of ``items``."""
    return {"apiVersion": "v1", "kind": "List", "items": items}


def _str_text(value: str) -> str:
    """A string's YAML text: plain when YAML reads it back as the same string, else
    double-quoted with JSON escapes (orjson's, which are ``json.dumps(value,
    ensure_ascii=False)``'s for every code point: ``test_writer.py``) and
    :data:`_UNPRINTABLE` escaped."""
    if _PLAIN.fullmatch(value) and _RESOLVER.resolve(
            yaml.ScalarNode, value, (True, False)) == "tag:yaml.org,2002:str":
        return value
    try:
        quoted = orjson.dumps(value).decode()
    except TypeError:  # a lone surrogate, which orjson refuses
        quoted = json.dumps(value, ensure_ascii=False)
    if quoted.isascii() and "\x7f" not in quoted:
        return quoted  # nothing to escape: every other unprintable is beyond ASCII
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


_KEPT = 512
"""Strings up to this length have their text kept in :data:`_TEXTS`: a longer one is
seldom written twice (a pending pod's explain annotation, kilobytes each), and keeping it
would hold megabytes in a long-running process."""
_ENTRIES = 65536
"""Entries :data:`_TEXTS` and :data:`_KEYS` each hold before they are emptied, to keep what
the current output repeats (a cluster repeats its names, keys, labels and values)."""
_TEXTS: dict[str, str] = {}  # a string's text
_KEYS: dict[str, str] = {}  # a string key's text with its ":"


def _keep(cache: dict[str, str], value: str, text: str) -> None:
    """Keep ``text`` as ``value``'s in ``cache``, emptied first when full (one rule for
    both caches: never above :data:`_ENTRIES`, and what is written now is kept)."""
    if len(cache) >= _ENTRIES:
        cache.clear()
    cache[value] = text


def _scalar_str(value: str) -> str:
    """:func:`_str_text`, kept for short strings (``_TEXTS.get(value) or`` before it, as
    the emitter calls it, costs a dict lookup per string)."""
    text = _TEXTS.get(value)
    if text is None:
        text = _str_text(value)
        if len(value) <= _KEPT:  # _keep's rule, inline: a call per new string cost 14 M
            if len(_TEXTS) >= _ENTRIES:  # instructions of templates-500's 3,250 M write
                _TEXTS.clear()
            _TEXTS[value] = text
    return text


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    if isinstance(value, str):
        return _scalar_str(value)
    raise TypeError(f"cannot write {type(value).__name__} as YAML")


def _key(key: Any) -> str:
    """A mapping key's text with its ":" (``_KEYS.get(key) or`` before it, as in
    :func:`_scalar_str`); only string keys are kept."""
    if type(key) is str:
        text = _KEYS.get(key)
        if text is None:
            text = _scalar_str(key) + ":"
            if len(key) <= _KEPT:
                _keep(_KEYS, key, text)
        return text
    return _scalar_str(str(key)) + ":"


def _emit(value: Any, indent: str, out: list[str], first: str | None = None) -> None:
    """Append the block-style lines of a non-empty dict or list at ``indent``; the first
    line starts with ``first`` instead of ``indent`` when given (``- `` of a list item, so
    no line is written twice)."""
    prefix = indent if first is None else first
    add = out.append
    keys = _KEYS  # only string keys are kept, so no other key finds one
    texts = _TEXTS  # a string's text: a lookup, a call only the first time
    if isinstance(value, dict):
        inner = indent + "  "
        for key in sorted(value, key=str):
            item = value[key]
            kind = type(item)
            head = prefix + (keys.get(key) or _key(key))
            if kind is str:
                add(f"{head} {texts.get(item) or _scalar_str(item)}")
            elif item and (kind is dict or kind is not list and isinstance(item, dict)):
                add(head)
                _emit(item, inner, out)
            elif item and (kind is list or isinstance(item, list)):
                add(head)
                _emit(item, indent, out)
            else:
                add(f"{head} {_inline(item)}")
            prefix = indent
    else:
        inner = indent + "  "
        for item in value:
            kind = type(item)
            if kind is str:
                add(f"{prefix}- {texts.get(item) or _scalar_str(item)}")
            elif item and (kind is dict or kind is list or isinstance(item, dict | list)):
                _emit(item, inner, out, prefix + "- ")
            else:
                add(f"{prefix}- {_inline(item)}")
            prefix = indent


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _scalar(value)


def to_yaml(document: Any) -> str:
    """``document`` as block-style YAML with sorted keys."""
    if not isinstance(document, dict | list) or not document:
        return _inline(document) + "\n"
    out: list[str] = []
    _emit(document, "", out)
    return "\n".join(out) + "\n"


_ORJSON_OPTIONS = (orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
                   # what the standard library refuses goes to ``not_json``, hence to it
                   | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME)
# Lines of orjson's output whose value the standard library writes differently: a float
# with a one-digit negative exponent (``1e-7``), one below 1e-4 written out (``0.00001``),
# and ``null`` (None, or NaN and infinities, which the standard library writes as such).
# Every value stands alone at the end of its line, and strings end in a quote.
_MAY_DIFFER = (re.compile(rb"e-\d,?\n"), re.compile(rb"\.0000\d*,?\n"),
               re.compile(rb"null,?\n"))


def not_json(value: Any) -> Any:
    """orjson's ``default`` where the standard library must write what orjson would
    otherwise: every value orjson cannot write itself is refused, as ``json.dumps``
    refuses it (also ``allocation/models/base.py``'s compact text).

    Raises:
        TypeError: always.
    """
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _orjson(document: Any) -> bytes | None:
    """orjson's bytes for ``document``, or None where the standard library must write it."""
    try:
        data = orjson.dumps(document, default=not_json, option=_ORJSON_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError too: the standard library says why, or can
        return None
    return None if any(pattern.search(data) for pattern in _MAY_DIFFER) else data


def _stdlib_json(document: Any) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def to_json(document: Any) -> str:
    """``document`` as ``json.dumps(document, indent=2, sort_keys=True,
    ensure_ascii=False)`` writes it, plus a newline.

    Raises:
        TypeError: ``document`` holds a value JSON cannot represent, or keys that cannot
            be sorted (as the standard library raises).
        ValueError: a circular reference.
    """
    data = _orjson(document)
    return _stdlib_json(document) if data is None else data.decode()


# How many items of a top-level list :func:`dump_to` encodes, decodes and writes at a time in
# JSON (a pod or claim is a few kilobytes of text, so a piece is about a megabyte).
_JSON_ITEMS = 256
# A value ``v`` is encoded as the document ``{"k": v}``: its text is then indented as the
# value of a top-level key, between these two (a list's items between the second two).
_VALUE_HEAD, _VALUE_TAIL = '{\n  "k": ', "\n}\n"
_ITEMS_HEAD, _ITEMS_TAIL = '{\n  "k": [\n', "\n  ]\n}\n"


def _json_pieces(document: Any, lazy: str | None = None) -> Iterator[str]:
    """:func:`to_json`'s text in pieces: a top-level dict's (a List's) non-empty list values
    :data:`_JSON_ITEMS` items at a time, so neither orjson's bytes nor their text is ever
    held whole (docs/architecture.md "Speed"); any other document at once. The value of key
    ``lazy`` is a non-empty iterator of items, read as it is written (:func:`dump_list_to`).
    """
    if lazy is None and (
            type(document) is not dict or not all(type(key) is str for key in document)
            or not any(type(value) is list and value for value in document.values())):
        yield to_json(document)  # nothing to cut, or keys the whole text refuses
        return
    keys = sorted(document)
    out = ["{\n"]
    for index, key in enumerate(keys):
        value = document[key]
        out.append(f"  {json.dumps(key, ensure_ascii=False)}: ")
        if lazy is not None and key == lazy or type(value) is list and value:
            out.append("[\n")
            items = iter(value)
            chunk = list(islice(items, _JSON_ITEMS))
            while chunk:
                following = list(islice(items, _JSON_ITEMS))
                out.append(to_json({"k": chunk})[len(_ITEMS_HEAD):-len(_ITEMS_TAIL)])
                out.append(",\n" if following else "\n")
                yield "".join(out)
                out = []
                chunk = following
            out.append("  ]")
        else:
            out.append(to_json({"k": value})[len(_VALUE_HEAD):-len(_VALUE_TAIL)])
        out.append(",\n" if index + 1 < len(keys) else "\n")
    out.append("}\n")
    yield "".join(out)


def _yaml_pieces(document: Any, lazy: str | None = None) -> Iterator[str]:
    """:func:`to_yaml`'s lines, one piece per item of a top-level list (a List's items);
    ``lazy`` as for :func:`_json_pieces`."""
    if lazy is None and (type(document) is not dict or not document):
        yield to_yaml(document)
        return
    lines: list[str] = []
    for key in sorted(document, key=str):
        item = document[key]
        # a list as _emit writes it: the key, then each item
        if lazy is not None and key == lazy or type(item) is list and item:
            lines.append(_KEYS.get(key) or _key(key))
            for element in item:
                _emit([element], "", lines)
                yield "\n".join(lines) + "\n"
                lines = []
        else:
            _emit({key: item}, "", lines)
    if lines:
        yield "\n".join(lines) + "\n"


def dump(document: Any, output: str = "yaml") -> str:
    """``document`` as text: ``yaml`` (block style) or ``json`` (two-space indent,
    :func:`to_json`).

    Raises:
        ValueError: an unknown ``output``.
        TypeError: a value neither format can represent.
    """
    _pieces_of(output)  # refuses an unknown output
    return to_json(document) if output == "json" else to_yaml(document)


def dump_to(write: Callable[[str], object], document: Any, output: str = "yaml") -> None:
    """Write :func:`dump`'s text through ``write``, in pieces that each end with a newline
    (so Django's ``OutputWrapper`` adds nothing): a List's items one by one in YAML,
    :data:`_JSON_ITEMS` at a time in JSON. The whole text is never held at once, so writing
    a large cluster needs memory for the largest object (or piece), not for the output
    (docs/architecture.md "Speed").

    Raises:
        ValueError: an unknown ``output``.
        TypeError: a value neither format can represent (after the items before it; in
            JSON, the pieces before its own).
    """
    for piece in _pieces_of(output)(document, None):
        write(piece)


def dump_list_to(write: Callable[[str], object], items: Iterable[Any],
                 output: str = "yaml") -> None:
    """``dump_to(write, as_list(list(items)), output)``, reading ``items`` as they are
    written: a simulation's objects are made into documents a piece at a time, never all
    at once (``Simulation.output_items``; docs/architecture.md "Speed").

    Raises:
        ValueError: an unknown ``output`` (before any item is read).
        TypeError: as :func:`dump_to`.
    """
    pieces = _pieces_of(output)
    items = iter(items)
    first = list(islice(items, 1))
    # an empty List has no items to cut: written whole
    document = as_list(chain(first, items)) if first else as_list([])
    for piece in pieces(document, "items" if first else None):
        write(piece)


_PIECES: dict[str, Callable[[Any, str | None], Iterator[str]]] = {
    "yaml": _yaml_pieces, "json": _json_pieces}


def _pieces_of(output: str) -> Callable[[Any, str | None], Iterator[str]]:
    """The function that cuts a document's ``output`` text into pieces.

    Raises:
        ValueError: an unknown ``output``.
    """
    pieces = _PIECES.get(output)
    if pieces is None:
        raise ValueError(f"unknown output format {output!r}: use yaml or json")
    return pieces
