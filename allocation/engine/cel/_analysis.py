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


def tokenize(source: str) -> list[Token]:
    """The tokens of ``source`` without whitespace and comments."""
    tokens: list[Token] = []
    for match in _TOKEN.finditer(source):
        kind = match.lastgroup or "punct"
        if kind != "space":
            tokens.append(Token(kind, match.group()))
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
    if literal[:1] in "bBrR" or literal.startswith(('"""', "'''")):
        return None
    try:
        value = ast.literal_eval(literal)
    except (SyntaxError, ValueError):
        return None
    return value if isinstance(value, str) else None
