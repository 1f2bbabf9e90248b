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

A cluster file repeats a few document shapes thousands of times (eight thousand pods that
differ only in their names): lines of one *shape* (indentation, list dashes and keys) give
documents of one structure, only the scalars differ. The second document of a shape compiles
that structure into one function of the document's scalars (a nested dict display, see
:func:`_compiled`), so later ones are built in one call instead of a walk over their lines.
Which text leaves the subset depends on the shape alone, so a shape that gave up once gives up
at once after.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from itertools import chain
from operator import itemgetter
from typing import Any

import yaml

from allocation.engine.manifests.yaml_loader import kube_loader

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
_SHAPES_KEPT = 4096  # document shapes remembered (compiled, or known to give up)
_COMPILED_TOKENS = 4096  # a larger document is read token by token, never compiled

# token kinds
_DASH, _KEY, _PAIR, _VALUE = range(4)


class _GiveUp(Exception):
    """The text leaves the subset read here."""


_SAFE_LOADER = kube_loader(yaml.SafeLoader)


class _Reader:
    """Scalars resolved and cached as ``yaml_documents._Builder`` does."""

    def __init__(self) -> None:
        self.loader = _SAFE_LOADER("")
        # The first characters of a plain scalar the resolver may read as other than a
        # string; any other is a string without asking it, as ``resolve`` itself decides
        # from the first character (unless it has resolvers for every character or path).
        implicit = self.loader.yaml_implicit_resolvers
        self.maybe_typed: frozenset[str] | None = (
            None if None in implicit or self.loader.yaml_path_resolvers
            else frozenset(implicit))
        self.tags: dict[str, str] = {}
        self.strings: dict[str, str] = {}
        self.values: dict[str, Any] = {}  # plain texts that are not strings: 1, true, null
        self.keys: dict[str, str] = {}  # a key's text (quoted or plain): the key
        self.lines: dict[str, tuple] = {}  # a line's entry (``_entry``)
        self.line_shapes: dict[tuple, int] = {}  # a line's shape: its number
        self.unique_shapes = 0
        self.documents: dict[tuple[int, ...], Any] = {}  # a document's shape: _SEEN, ...

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
            if self.maybe_typed is not None and first not in self.maybe_typed:
                return self.shared(text)  # a name, most new texts of a cluster file
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
                raise _GiveUp  # a text of another tag, ...: the builder's own way
            if len(self.values) < _CACHED:
                self.values[text] = value
        return value

    def key(self, text: str) -> str:
        key = self.keys.get(text)  # a few hundred keys, on every new line
        if key is None:
            if text[0] in "\"'":
                key = self.shared(text[1:-1])
            elif self.scalar(text).__class__ is not str:
                raise _GiveUp  # `5:`, `true:`, `~:`: the builder reports such keys
            else:
                key = self.shared(text)
            if len(self.keys) < _CACHED:
                self.keys[text] = key
        return key


def _entry(line: str, reader: _Reader) -> tuple:
    """``(shape number, scalars, tokens, shape)`` of one line (:func:`_line_tokens`).

    The shape is the tokens with a value's place instead of the value: the type of a fresh
    ``{}`` or ``[]``, else None; it is all that decides the structure of a document
    (:func:`_tree`). The scalars are the other values (one at most). Lines of one shape
    share a number; once :data:`_CACHED` shapes are known a new one gets a negative number
    no other line has.
    """
    tokens = _line_tokens(line, reader)
    shape, scalars = tokens, ()
    if tokens and tokens[-1][1] != _KEY:  # a value ends the line (a dash never does)
        column, kind, key, value = tokens[-1]
        fresh = value.__class__ if value.__class__ in _FRESH else None
        shape = (*tokens[:-1], (column, kind, key, fresh))
        if fresh is None:
            scalars = (value,)
    shapes = reader.line_shapes
    number = shapes.get(shape)
    if number is None:
        if len(shapes) < _CACHED:
            number = shapes[shape] = len(shapes)
        else:
            reader.unique_shapes += 1
            number = -reader.unique_shapes
    return number, scalars, tokens, shape


def _entries(lines: list[str], reader: _Reader) -> list[tuple]:
    """The entry of each line (:func:`_entry`).

    A cluster file repeats most of its lines word for word (``kind: Pod``, ``image: ...``,
    ``cpu: '1'``): each distinct line is matched and resolved once and its entry reused,
    except a line whose value is a fresh ``{}`` or ``[]`` (never shared between documents).
    """
    known = reader.lines
    entries = list(map(known.get, lines))
    index = -1
    while True:  # the few new lines of a document (its name), found in C, each scan
        try:     # going on from the last (from the start each time was quadratic in a
            index = entries.index(None, index + 1)  # large document of new lines)
        except ValueError:
            break
        line = lines[index]
        found = entries[index] = _entry(line, reader)
        if len(known) < _CACHED and not (found[2] and found[2][-1][3].__class__ in _FRESH):
            known[line] = found
    return entries


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


_SHAPE, _SCALARS, _TOKENS = itemgetter(0), itemgetter(1), itemgetter(2)
_SEEN, _GIVES_UP = object(), object()  # a shape read once; a shape outside the subset


def _document(lines: list[str], reader: _Reader) -> Any:
    """The data of one document (None if it has no tokens).

    Raises:
        _GiveUp: the document is outside the subset.
    """
    entries = _entries(lines, reader)
    shape = tuple(map(_SHAPE, entries))
    documents = reader.documents
    known = documents.get(shape)
    if known is not None and known is not _SEEN:
        if known is _GIVES_UP:
            raise _GiveUp
        return known(list(chain.from_iterable(map(_SCALARS, entries))))
    tokens = list(chain.from_iterable(map(_TOKENS, entries)))
    kept = shape in documents or len(documents) < _SHAPES_KEPT
    try:
        value = _tree(tokens)
    except _GiveUp:
        if kept:
            documents[shape] = _GIVES_UP
        raise
    if kept:  # built twice: compiled from now on, unless it is too large
        documents[shape] = (_SEEN if known is None or len(tokens) > _COMPILED_TOKENS
                            else _compiled(entries))
    return value


class _Slot:
    """The place of a document's n-th scalar in a shape's structure."""

    __slots__ = ("number",)

    def __init__(self, number: int) -> None:
        self.number = number


def _compiled(entries: list[tuple]) -> Callable[[list], Any]:
    """The function that builds a document of the shape of ``entries`` from its scalars.

    The structure is read by :func:`_tree` itself, from tokens whose values are
    placeholders, then written as one Python expression: keys as string literals, each
    scalar as ``v[n]``, ``{}`` and ``[]`` as displays (a new object per document). Nothing
    of the text but keys reaches the expression, and only through ``repr``.
    """
    tokens: list[tuple] = []
    slots = 0
    for entry in entries:
        for column, kind, key, fresh in entry[3]:
            value = None
            if fresh is not None:
                value = fresh()
            elif kind in (_PAIR, _VALUE):
                value = _Slot(slots)
                slots += 1
            tokens.append((column, kind, key, value))
    return eval("lambda v: " + _expression(_tree(tokens)))


def _expression(value: Any) -> str:
    if value.__class__ is dict:
        return "{" + ",".join(f"{key!r}:{_expression(item)}" for key, item in value.items()) \
            + "}"
    if value.__class__ is list:
        return "[" + ",".join(map(_expression, value)) + "]"
    if value.__class__ is _Slot:
        return f"v[{value.number}]"
    if value is None:
        return "None"
    raise AssertionError(f"unexpected {value!r} in a shape")  # pragma: no cover


def _tree(tokens: list[tuple]) -> Any:
    """The value of a document's tokens (None for none).

    Raises:
        _GiveUp: an indentation this reader does not expect, a key given twice, ...
    """
    if not tokens:
        return None
    if tokens[0][0] != 0:
        raise _GiveUp
    value, pos = _node(tokens, 0, 1)
    if pos != len(tokens):
        raise _GiveUp  # an indentation this reader does not expect
    return value


# A line that is exactly "---", found from the newline before it (the text is read with a
# newline in front, so a first line is found the same way).
_SEPARATOR = re.compile(r"\n---(?=\n|\Z)")


def _pieces(text: str) -> list[list[str]]:
    """The lines of ``text`` between its ``---`` lines, as ``text.split("\\n")`` cut at
    each line that is exactly ``---`` (the line dropped): a first or last line ``---`` and
    two in a row give an empty piece. Cut in C: each piece but an empty one is a newline,
    then its lines joined by newlines."""
    return [piece[1:].split("\n") if piece else [] for piece in _SEPARATOR.split("\n" + text)]


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
    pieces = _pieces(text)
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
