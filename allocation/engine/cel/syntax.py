"""CEL source as a tree and back: for tools that rewrite expressions (``convert``).

The tree is the cost estimator's (``_parser``): operators, calls, selections, literals with
their source text, macros. :func:`unparse` writes a tree back as CEL with the parentheses the
grammar needs (cel-spec ``langdef.md`` precedence), so ``unparse(parse(s))`` means what ``s``
means. Two things the tree does not keep are refused by :func:`parse` instead of being lost:
optional syntax (``m.?f``, ``m[?k]``, ``{?k: v}``) and message construction (``T{f: v}``);
neither has a use over a device.
"""

from __future__ import annotations

from allocation.engine.cel._analysis import tokenize
from allocation.engine.cel._parser import Node, ParseError
from allocation.engine.cel._parser import parse as _parse_tree

__all__ = ["Node", "ParseError", "parse", "unparse", "string_literal", "literal_value"]

# Binding strength of each operator; a child binding less tightly than its place needs is
# parenthesized.
_PRECEDENCE = {"_?_:_": 0, "_||_": 1, "_&&_": 2, "_<_": 3, "_<=_": 3, "_>_": 3, "_>=_": 3,
               "_==_": 3, "_!=_": 3, "@in": 3, "_+_": 4, "_-_": 4, "_*_": 5, "_/_": 5,
               "_%_": 5}
_UNARY, _PRIMARY = 6, 7
_OPTIONAL_BEFORE = frozenset({".", "[", "{", ",", "("})


def parse(source: str) -> Node:
    """The tree of ``source``.

    Raises:
        ParseError: text this parser cannot read, optional syntax or a message literal.
    """
    tokens = tokenize(source)
    for before, token in zip(tokens, tokens[1:], strict=False):
        if token.text == "?" and before.text in _OPTIONAL_BEFORE:
            raise ParseError("optional syntax (.?, [?], {?}) cannot be rewritten")
    tree = _parse_tree(source)
    if _has_struct(tree):
        raise ParseError("message literals (Type{field: value}) cannot be rewritten")
    return tree


def _has_struct(node: Node) -> bool:
    return node.kind == "struct" or any(_has_struct(arg) for arg in node.args)


def string_literal(value: str) -> str:
    """``value`` as a double-quoted CEL string literal."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def literal_value(node: Node) -> object:
    """The value of a plain string literal node (no raw, bytes or triple quotes), else None."""
    if node.kind != "literal" or node.name != "string":
        return None
    text = node.text
    if text[:1] not in "\"'" or text.startswith(('"""', "'''")) or "\\" in text:
        return None
    return text[1:-1]


def _strength(node: Node) -> int:
    if node.kind == "call" and not node.member and node.name in _PRECEDENCE:
        return _PRECEDENCE[node.name]
    if node.kind == "unary":
        return _UNARY
    return _PRIMARY


def _wrapped(node: Node, needed: int) -> str:
    text = unparse(node)
    return f"({text})" if _strength(node) < needed else text


def unparse(node: Node) -> str:
    """CEL source text for ``node``.

    Raises:
        ParseError: a node kind that has no source form here (a message literal).
    """
    kind = node.kind
    if kind == "literal":
        return node.text
    if kind == "ident":
        return node.name
    if kind == "select":
        return f"{_wrapped(node.args[0], _PRIMARY)}.{node.name}"
    if kind == "has":
        return f"has({_wrapped(node.args[0], _PRIMARY)}.{node.name})"
    if kind == "unary":
        return node.name[0] * node.size + _wrapped(node.args[0], _PRIMARY)
    if kind == "list":
        return "[" + ", ".join(unparse(arg) for arg in node.args) + "]"
    if kind == "map":
        pairs = zip(node.args[::2], node.args[1::2], strict=True)
        return "{" + ", ".join(f"{unparse(k)}: {unparse(v)}" for k, v in pairs) + "}"
    if kind == "macro":
        rest = ", ".join(unparse(arg) for arg in node.args[1:])
        return f"{_wrapped(node.args[0], _PRIMARY)}.{node.name}({node.var}, {rest})"
    if kind == "call":
        return _call(node)
    raise ParseError(f"cannot write a {kind} node as CEL")


def _call(node: Node) -> str:
    name, args = node.name, node.args
    if node.member:
        inner = ", ".join(unparse(arg) for arg in args[1:])
        return f"{_wrapped(args[0], _PRIMARY)}.{name}({inner})"
    if name == "_[_]":
        return f"{_wrapped(args[0], _PRIMARY)}[{unparse(args[1])}]"
    if name == "_?_:_":
        return (f"{_wrapped(args[0], 1)} ? {_wrapped(args[1], 1)} : "
                f"{_wrapped(args[2], 0)}")
    if name in ("_&&_", "_||_"):
        strength = _PRECEDENCE[name]
        return f" {name[1:-1]} ".join(_wrapped(arg, strength + 1) for arg in args)
    if name in _PRECEDENCE:
        strength = _PRECEDENCE[name]
        operator = "in" if name == "@in" else name[1:-1]
        return (f"{_wrapped(args[0], strength)} {operator} "
                f"{_wrapped(args[1], strength + 1)}")
    return f"{name}(" + ", ".join(unparse(arg) for arg in args) + ")"
