"""Static checks on CEL source text: its tokens, and which attributes it reads.

A small tokenizer (string literals are skipped as units) is enough: anything it is not sure
about makes :func:`attribute_reads` answer None, meaning "may read any attribute".
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = [
    "MAP_VARIABLES",
    "Token",
    "tokenize",
    "attribute_reads",
    "DeviceRead",
    "DRIVER_DOMAIN",
    "device_reads",
]

MAP_VARIABLES = frozenset({
    "attributes", "quantities", "versions", "ints", "bools", "strings", "intSlices",
    "stringSlices",
})

_TOKEN = re.compile(
    r"""(?P<space>\s+|//[^\n]*)
    |(?P<string>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''
        |"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
    |(?P<number>(?:0[xX][0-9a-fA-F]+|(?:[0-9]*\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?)[uU]?)
    |(?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<punct>&&|\|\||==|!=|<=|>=|.)""",
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class Token:
    """One lexical token: its kind (string, number, ident, punct) and text."""

    kind: str
    text: str
    start: int = 0


def tokenize(source: str) -> list[Token]:
    """The tokens of ``source`` without whitespace and comments."""
    tokens: list[Token] = []
    for match in _TOKEN.finditer(source):
        kind = match.lastgroup or "punct"
        if kind != "space":
            tokens.append(Token(kind, match.group(), match.start()))
    return tokens


def attribute_reads(source: str) -> frozenset[str] | None:
    """The attribute names ``source`` can read, or None when it may read any of them."""
    tokens = tokenize(source)
    reads: set[str] = set()
    for index, token in enumerate(tokens):
        if token.kind != "ident" or token.text not in MAP_VARIABLES:
            continue
        if index > 0 and tokens[index - 1].text == ".":
            continue  # a field of something else, e.g. object.attributes
        name = _key_after(tokens, index)
        if name is None:
            return None
        reads.add(name)
    return frozenset(reads)


def _key_after(tokens: list[Token], index: int) -> str | None:
    following = tokens[index + 1 : index + 4]
    texts = [t.text for t in following]
    if len(following) >= 3 and texts[0] == "[" and following[1].kind == "string" \
            and texts[2] == "]":
        return _string_value(following[1].text)
    if len(following) >= 2 and texts[0] == "." and following[1].kind == "ident":
        if len(following) >= 3 and texts[2] == "(":
            return None  # a macro or method on the map itself
        return following[1].text
    return None


def _string_value(literal: str) -> str | None:
    # Python reads CEL's escapes alike, except "\?" and "\`" (CEL: "?" and "`"; Python keeps
    # the backslash) and "\N{...}" (not CEL): a key with those is not followed.
    if literal[:1] in "bBrR" or literal.startswith(('"""', "'''")) \
            or any(escape in literal for escape in ("\\?", "\\`", "\\N")):
        return None
    try:
        value = ast.literal_eval(literal)
    except (SyntaxError, ValueError):
        return None
    return value if isinstance(value, str) else None


#: A value a v1 device selector reads: ("driver",), ("allowMultipleAllocations",),
#: (map, domain, id) with map "attributes" or "capacity" (id None: the whole domain), or
#: (map,) for the whole map. A domain of DRIVER_DOMAIN is ``[device.driver]``.
DeviceRead = tuple[str | None, ...]
DRIVER_DOMAIN = None
_DEVICE_MAPS = ("attributes", "capacity")


def device_reads(source: str) -> tuple[DeviceRead, ...] | None:
    """The values a resource.k8s.io/v1 selector can read through ``device``, or None when it
    may read anything (a use of ``device`` this analysis does not follow)."""
    tokens = tokenize(source)
    reads: set[DeviceRead] = set()
    for index, token in enumerate(tokens):
        if token.kind != "ident" or token.text != "device":
            continue
        # A field named "device" of something else over-reads, which is safe.
        texts = [t.text for t in tokens[index + 1 : index + 3]]
        if len(texts) < 2 or texts[0] != "." or tokens[index + 2].kind != "ident":
            return None
        field = texts[1]
        if field in ("driver", "allowMultipleAllocations"):
            reads.add((field,))
        elif field in _DEVICE_MAPS:
            reads.add(_map_read(field, tokens, index + 3))
        else:
            return None
    return tuple(sorted(reads, key=repr))


def _map_read(field: str, tokens: list[Token], index: int) -> DeviceRead:
    domain, after = _key_at(tokens, index)
    if after is None:
        return (field,)
    ident, end = _key_at(tokens, after)
    if end is None or ident is DRIVER_DOMAIN:
        return (field, domain, None)
    return (field, domain, ident)


def _key_at(tokens: list[Token], index: int) -> tuple[str | None, int | None]:
    """(key, index after) for ``["literal"]``, ``.name`` (not a call) or ``[device.driver]``
    (key DRIVER_DOMAIN) at ``index``; (None, None) for anything else."""
    texts = [t.text for t in tokens[index : index + 5]]
    if len(texts) >= 3 and texts[0] == "[" and tokens[index + 1].kind == "string" \
            and texts[2] == "]":
        key = _string_value(texts[1])
        return (key, index + 3) if key is not None else (None, None)
    if len(texts) >= 2 and texts[0] == "." and tokens[index + 1].kind == "ident" \
            and texts[2:3] != ["("]:
        return texts[1], index + 2
    if texts == ["[", "device", ".", "driver", "]"]:
        return DRIVER_DOMAIN, index + 5
    return None, None
