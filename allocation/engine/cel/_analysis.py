"""Static checks on CEL source text: which attributes it reads, and how deep its loops nest.

A small tokenizer (string literals are skipped as units) is enough: anything it is not sure
about makes :func:`attribute_reads` answer None, meaning "may read any attribute".
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = [
    "MAP_VARIABLES",
    "MAX_COMPREHENSION_NESTING",
    "MAX_COMPREHENSION_FANOUT",
    "Token",
    "tokenize",
    "attribute_reads",
    "comprehension_problem",
]

MAP_VARIABLES = frozenset({
    "attributes", "quantities", "versions", "ints", "bools", "strings", "intSlices",
    "stringSlices",
})
MAX_COMPREHENSION_NESTING = 3
MAX_COMPREHENSION_FANOUT = 64
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})

_TOKEN = re.compile(
    r"""(?P<space>\s+|//[^\n]*)
    |(?P<string>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''
        |"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
    |(?P<number>(?:0[xX][0-9a-fA-F]+|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)[uU]?)
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


def comprehension_problem(source: str) -> str | None:
    """Why the loops of ``source`` could build values too large to evaluate, or None.

    Loops may nest at most MAX_COMPREHENSION_NESTING deep; when they nest, the product of the
    number of uses of each loop variable along the nesting (how much a value can be copied)
    may not exceed MAX_COMPREHENSION_FANOUT.
    """
    tokens = tokenize(source)
    loops = _loops(tokens)
    for start, end, _ in loops:
        chain = [(s, f) for s, e, f in loops if s <= start and end <= e]
        if len(chain) > MAX_COMPREHENSION_NESTING:
            return (f"comprehensions nest {len(chain)} deep; at most "
                    f"{MAX_COMPREHENSION_NESTING} levels are allowed")
        if len(chain) > 1:
            product = 1
            for _, uses in chain:
                product *= max(uses, 1)
            if product > MAX_COMPREHENSION_FANOUT:
                return ("nested comprehensions copy their loop variables "
                        f"{product} times; at most {MAX_COMPREHENSION_FANOUT} are allowed")
    return None


def _loops(tokens: list[Token]) -> list[tuple[int, int, int]]:
    """(start, end, uses of the loop variable) for each macro comprehension."""
    loops = []
    for index, token in enumerate(tokens):
        if token.kind != "ident" or token.text not in _MACROS:
            continue
        if index == 0 or tokens[index - 1].text != ".":
            continue
        window = tokens[index + 1 : index + 4]
        if len(window) < 3 or window[0].text != "(" or window[1].kind != "ident" \
                or window[2].text != ",":
            continue
        end = _closing(tokens, index + 1)
        variable = window[1].text
        uses = sum(1 for t in tokens[index + 4 : end] if t.kind == "ident" and t.text == variable)
        loops.append((index, end, uses))
    return loops


def _closing(tokens: list[Token], open_index: int) -> int:
    depth = 0
    for index in range(open_index, len(tokens)):
        text = tokens[index].text
        if text in "([{":
            depth += 1
        elif text in ")]}":
            depth -= 1
            if depth == 0:
                return index
    return len(tokens)
