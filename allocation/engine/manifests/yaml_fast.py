"""The documents of plain block-style YAML, read line by line without libyaml's events.

A large cluster file (the planner's own output, ``kubectl get -o yaml``, generated input) is
nearly always block style with plain or simply quoted scalars. libyaml hands the builder of
``yaml_documents.py`` one Python event object (and two marks) per scalar, list and object;
that is most of the time ``simulate`` spends reading YAML (docs/architecture.md, "Speed").
This reader takes one regular-expression match per line instead.

It reads a strict subset and gives up on anything else, never guessing: :func:`fast_documents`
returns ``None`` (and the caller reads the text through libyaml, which says what is wrong
where) for comments after a value, flow collections other than ``{}`` and ``[]``, block
scalars, anchors, aliases, tags, merge keys, escapes, non-ASCII text, tabs, multi-line
scalars, a key given twice, a key that is not a string, a value YAML would refuse or that is
not finite, an indentation it does not expect, a document of more than a megabyte or nested
deeper than :data:`_DEPTH`. Scalars are resolved as PyYAML's SafeLoader resolves them (the
same resolver and constructors), so the documents are those libyaml would give; a
differential test holds the two equal.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import yaml

__all__ = ["fast_documents"]

_PLAIN = r"[A-Za-z0-9_./(][A-Za-z0-9_./=+() -]*(?<! )"  # no ':', '#', quote or indicator
_DOUBLE = r'"[ !#-\[\]-~]*"'  # printable ASCII, no escape
_SINGLE = r"'[ -&(-~]*'"
_SCALAR = rf"{_PLAIN}|{_DOUBLE}|{_SINGLE}|\{{\}}|\[\]"
# indent, "- " (a list item), then "key:" with an optional value, or a lone value
_LINE = re.compile(rf"( *)(- +)?(?:({_PLAIN}|{_DOUBLE}|{_SINGLE}):(?: +({_SCALAR}))?|"
                   rf"({_SCALAR}))")
_SKIP = re.compile(r" *(#.*)?")  # blank and comment-only lines
_STR = "tag:yaml.org,2002:str"
_DEPTH = 40
_MARKERS = ("%", "---", "...")  # directives and document markers: libyaml reads the text
_PIECE_CHARS = 2**20  # far below the 4 MiB and million-value bounds of limits.py
_CACHED = 65536
_SHARED_LENGTH = 64

# token kinds
_DASH, _KEY, _PAIR, _VALUE = range(4)


class _GiveUp(Exception):
    """The text leaves the subset read here."""


class _Reader:
    """Scalars resolved and cached as ``yaml_documents._Builder`` does."""

    def __init__(self) -> None:
        self.loader = yaml.SafeLoader("")
        self.tags: dict[str, str] = {}
        self.strings: dict[str, str] = {}
        self.values: dict[str, Any] = {}  # plain texts that are not strings: 1, true, null
        self.lines: dict[str, tuple[tuple, ...]] = {}  # a line's tokens (``_tokens``)

    def shared(self, text: str) -> str:
        if len(text) > _SHARED_LENGTH:
            return text
        if len(self.strings) < _CACHED:
            return self.strings.setdefault(text, text)
        return self.strings.get(text, text)

    def scalar(self, text: str) -> Any:
        first = text[0]
        if first == '"' or first == "'":
            return self.shared(text[1:-1])
        if first == "{" and text == "{}":
            return {}
        if first == "[" and text == "[]":
            return []
        tag = self.tags.get(text)
        if tag is None:
            tag = self.loader.resolve(yaml.ScalarNode, text, (True, False))
            if len(self.tags) < _CACHED:
                self.tags[text] = tag
        if tag == _STR:
            return self.shared(text)
        return self._constructed(tag, text)

    def _constructed(self, tag: str, text: str) -> Any:
        value = self.values.get(text, self)
        if value is self:
            constructor = self.loader.yaml_constructors.get(tag)
            if constructor is None:
                raise _GiveUp
            try:
                value = constructor(self.loader, yaml.ScalarNode(tag, text))
            except Exception:  # noqa: BLE001 - libyaml's reading reports it
                raise _GiveUp from None
            if isinstance(value, float) and not math.isfinite(value):
                raise _GiveUp
            if not isinstance(value, int | float | bool) and value is not None:
                raise _GiveUp  # a date, binary data, ...: the builder's own way
            if len(self.values) < _CACHED:
                self.values[text] = value
        return value

    def key(self, text: str) -> str:
        if text[0] in "\"'":
            return self.shared(text[1:-1])
        if self.scalar(text).__class__ is not str:
            raise _GiveUp  # `5:`, `true:`, `~:`: the builder reports such keys
        return self.shared(text)


def _tokens(lines: list[str], reader: _Reader) -> list[tuple]:
    """``(column, kind, key, value)`` per line, a list item's dash a token of its own.

    A cluster file repeats most of its lines word for word (``kind: Pod``, ``image: ...``,
    ``cpu: '1'``): each distinct line is matched and resolved once and its tokens reused,
    except a line whose value is a fresh ``{}`` or ``[]`` (never shared between documents).
    """
    tokens: list[tuple] = []
    known = reader.lines
    for line in lines:
        found = known.get(line)
        if found is None:
            found = _line_tokens(line, reader)
            if len(known) < _CACHED and not (found and found[-1][3].__class__ in _FRESH):
                known[line] = found
        tokens += found
    return tokens


_FRESH = (dict, list)


def _line_tokens(line: str, reader: _Reader) -> tuple[tuple, ...]:
    """The tokens of one line (none for a blank or comment-only one)."""
    found = _LINE.fullmatch(line)
    if found is None:
        if _SKIP.fullmatch(line):
            return ()
        raise _GiveUp
    indent, dash, key, value, alone = found.groups()
    column = len(indent)
    if dash is not None:
        dash_token = (column, _DASH, None, None)
        column += len(dash)
        if key is None:
            return dash_token, (column, _VALUE, None, reader.scalar(alone))
    elif key is None:
        raise _GiveUp  # a lone value: a document that is a scalar, or a multi-line one
    token = (column, _KEY, reader.key(key), None) if value is None else \
        (column, _PAIR, reader.key(key), reader.scalar(value))
    return (token,) if dash is None else (dash_token, token)


def _node(tokens: list[tuple], pos: int, depth: int) -> tuple[Any, int]:
    if depth > _DEPTH:
        raise _GiveUp
    column, kind = tokens[pos][0], tokens[pos][1]
    if kind == _DASH:
        return _sequence(tokens, pos, column, depth)
    if kind == _VALUE:
        raise _GiveUp
    return _mapping(tokens, pos, column, depth)


def _mapping(tokens: list[tuple], pos: int, column: int, depth: int) -> tuple[dict, int]:
    result: dict[str, Any] = {}
    end = len(tokens)
    while pos < end:
        at, kind, key, value = tokens[pos]
        if at != column or (kind != _PAIR and kind != _KEY):
            break
        if key in result:
            raise _GiveUp  # the builder reports the key given twice
        pos += 1
        if kind == _KEY and pos < end:
            below = tokens[pos]
            if below[0] > column or below[0] == column and below[1] == _DASH:
                value, pos = _node(tokens, pos, depth + 1)  # else `key:` alone: null
        result[key] = value
    return result, pos


def _sequence(tokens: list[tuple], pos: int, column: int, depth: int) -> tuple[list, int]:
    result: list[Any] = []
    end = len(tokens)
    while pos < end and tokens[pos][0] == column and tokens[pos][1] == _DASH:
        pos += 1  # the item's content always follows on the dash's line
        at, kind, _, value = tokens[pos]
        if kind == _VALUE:
            result.append(value)
            pos += 1
        else:
            item, pos = _mapping(tokens, pos, at, depth + 1)
            result.append(item)
    return result, pos


def _document(lines: list[str], reader: _Reader) -> Any:
    tokens = _tokens(lines, reader)
    if not tokens:
        return None
    if tokens[0][0] != 0:
        raise _GiveUp
    value, pos = _node(tokens, 0, 1)
    if pos != len(tokens):
        raise _GiveUp  # an indentation this reader does not expect
    return value


def fast_documents(text: str, read_one: Callable[[str], tuple[bool, Any]]
                   ) -> list[Any] | None:
    """The data of every document of ``text`` (None for an empty one), numbered as libyaml
    numbers them; ``None`` when ``text`` is better read whole by libyaml.

    A document outside the subset (a CEL expression in quotes, a flow mapping) is handed
    alone to ``read_one``, which answers ``(True, data)`` when libyaml reads it as one
    document without a problem, else ``(False, None)``: then the whole text is left to
    libyaml, so every problem and line number is reported as before. Only a document
    without directives and document markers is read alone, so it reads as it does in place.
    """
    reader = _Reader()
    documents: list[Any] = []
    pieces: list[list[str]] = [[]]
    for line in text.split("\n"):
        if line == "---":
            pieces.append([])
        else:
            pieces[-1].append(line)
    for number, lines in enumerate(pieces):
        if sum(map(len, lines)) > _PIECE_CHARS:
            return None
        try:
            data = _document(lines, reader)
        except _GiveUp:
            if any(line.startswith(_MARKERS) for line in lines):
                return None
            # the text as it stands in place: each line ends in a newline but maybe the last
            last = number == len(pieces) - 1
            read, data = read_one("\n".join(lines) if last else "\n".join(lines) + "\n")
            if not read:
                return None
        if number == 0 and data is None and not any(
                _LINE.fullmatch(line) for line in lines):
            continue  # blank lines or comments before the first "---": no document
        documents.append(data)
    return documents
