"""A parser of CEL source text into a small tree, for the cost estimate (``cost``).

It follows the CEL grammar (cel-spec ``langdef.md``) closely enough to see every operator,
call, literal and comprehension macro, and no further: it never decides whether an expression
is valid, because the library compiles (parses and type-checks) every expression first. Chains
of ``&&``/``||`` and of unary operators become one node each, so the tree stays shallow however
long the expression; the library refuses deeper nesting (32 levels) before we parse.
"""

from __future__ import annotations

from dataclasses import dataclass

from allocation.engine.cel._analysis import Token, tokenize

__all__ = ["Node", "ParseError", "parse", "MACROS"]

MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_RELATIONS = frozenset({"<", "<=", ">", ">=", "==", "!=", "in"})
_KEYWORD_LITERALS = frozenset({"true", "false", "null"})


class ParseError(ValueError):
    """Source text this parser does not understand (the estimate then refuses it)."""


@dataclass(frozen=True, slots=True)
class Node:
    """One expression.

    ``kind`` is one of: ``literal`` (``name`` "string", "bytes" or "scalar"; ``size`` its
    length), ``ident``, ``select`` (``args`` = operand, ``name`` = field), ``has``
    (``args`` = the tested select), ``unary`` (``name`` "!_" or "-_", applied ``size`` times),
    ``call`` (``name`` the function, e.g. "_+_" or "startsWith"; for a member call ``member``
    is set and ``args[0]`` is the target), ``list``, ``map`` (``args`` = key, value, key,
    value...), ``struct`` (``args`` = field values) and ``macro`` (``name`` the macro,
    ``var`` the loop variable, ``args`` = range, then the macro's expressions).
    """

    kind: str
    name: str = ""
    args: tuple[Node, ...] = ()
    size: int = 0
    member: bool = False
    var: str = ""


def parse(source: str) -> Node:
    """The tree of ``source``; ParseError when it is not CEL this parser can read."""
    parser = _Parser(tokenize(source))
    node = parser.expression()
    if parser.position != len(parser.tokens):
        raise ParseError(f"unexpected {parser.peek()!r}")
    return node


def _string_size(literal: str) -> tuple[str, int]:
    """("string" or "bytes", an upper bound of the literal's length once decoded)."""
    prefix = len(literal) - len(literal.lstrip("rRbB"))
    body = literal[prefix:]
    quotes = 3 if body.startswith(('"""', "'''")) else 1
    text = body[quotes:len(body) - quotes]
    if "b" in literal[:prefix].lower():
        return "bytes", len(text.encode("utf-8"))  # escapes only shrink the value
    return "string", len(text)


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.position = 0

    def peek(self, ahead: int = 0) -> str:
        index = self.position + ahead
        return self.tokens[index].text if index < len(self.tokens) else ""

    def _next(self) -> Token:
        if self.position >= len(self.tokens):
            raise ParseError("unexpected end of the expression")
        token = self.tokens[self.position]
        self.position += 1
        return token

    def _expect(self, text: str) -> None:
        token = self._next()
        if token.text != text:
            raise ParseError(f"expected {text!r}, found {token.text!r}")

    def expression(self) -> Node:
        condition = self._chain("||", self._conjunction)
        if self.peek() != "?":
            return condition
        self._next()
        when_true = self._chain("||", self._conjunction)
        self._expect(":")
        return Node("call", "_?_:_", (condition, when_true, self.expression()))

    def _conjunction(self) -> Node:
        return self._chain("&&", self._relation)

    def _chain(self, operator: str, operand) -> Node:
        parts = [operand()]
        while self.peek() == operator:
            self._next()
            parts.append(operand())
        return parts[0] if len(parts) == 1 else Node("call", f"_{operator}_", tuple(parts))

    def _relation(self) -> Node:
        left = self._binary(self._product, "+-")
        while self.peek() in _RELATIONS:
            operator = self._next().text
            name = "@in" if operator == "in" else f"_{operator}_"
            left = Node("call", name, (left, self._binary(self._product, "+-")))
        return left

    def _product(self) -> Node:
        return self._binary(self._unary, "*/%")

    def _binary(self, operand, operators: str) -> Node:
        left = operand()
        while self.peek() and self.peek() in operators:
            operator = self._next().text
            left = Node("call", f"_{operator}_", (left, operand()))
        return left

    def _unary(self) -> Node:
        operator = self.peek()
        if operator not in ("!", "-"):
            return self._member()
        count = 0
        while self.peek() == operator:
            self._next()
            count += 1
        return Node("unary", f"{operator}_", (self._member(),), size=count)

    def _member(self) -> Node:
        node = self._primary()
        while self.peek() in (".", "[", "{"):
            if self.peek() == "{":
                if not _is_name(node):
                    break
                node = self._struct(node)
            elif self._next().text == "[":
                self._optional()  # m[?key]: costs as m[key]
                index = self.expression()
                self._expect("]")
                node = Node("call", "_[_]", (node, index))
            else:
                self._optional()  # m.?field: costs as m.field
                name = self._next()
                if name.kind != "ident":
                    raise ParseError(f"expected a field name, found {name.text!r}")
                if self.peek() == "(":
                    node = self._member_call(node, name.text, self._arguments(")"))
                else:
                    node = Node("select", name.text, (node,))
        return node

    def _optional(self) -> None:
        """Skip the ``?`` of optional syntax (``.?f``, ``[?k]``, ``[?x]``, ``{?k: v}``)."""
        if self.peek() == "?":
            self._next()

    def _member_call(self, target: Node, name: str, args: list[Node]) -> Node:
        if name in MACROS and len(args) in (2, 3) and args[0].kind == "ident":
            return Node("macro", name, (target, *args[1:]), var=args[0].name)
        return Node("call", name, (target, *args), member=True)

    def _arguments(self, close: str) -> list[Node]:
        self._next()  # the opening bracket
        items: list[Node] = []
        while self.peek() != close:
            self._optional()
            items.append(self.expression())
            if self.peek() == ",":
                self._next()
            elif self.peek() != close:
                raise ParseError(f"expected ',' or {close!r}, found {self.peek()!r}")
        self._next()
        return items

    def _struct(self, name: Node) -> Node:
        self._next()
        values: list[Node] = []
        while self.peek() != "}":
            self._optional()
            self._next()  # the field name
            self._expect(":")
            values.append(self.expression())
            if self.peek() == ",":
                self._next()
        self._next()
        return Node("struct", _dotted(name), tuple(values))

    def _primary(self) -> Node:
        token = self.peek()
        if token == "(":
            self._next()
            node = self.expression()
            self._expect(")")
            return node
        if token == "[":
            return Node("list", args=tuple(self._arguments("]")))
        if token == "{":
            return self._map()
        if token == ".":
            self._next()
        current = self._next()
        if current.kind == "string":
            kind, size = _string_size(current.text)
            return Node("literal", kind, size=size)
        if current.kind == "number" or current.text in _KEYWORD_LITERALS:
            return Node("literal", "scalar", size=1)
        if current.kind != "ident":
            raise ParseError(f"unexpected {current.text!r}")
        if self.peek() != "(":
            return Node("ident", current.text)
        args = self._arguments(")")
        if current.text == "has" and len(args) == 1 and args[0].kind == "select":
            return Node("has", args[0].name, args[0].args)
        return Node("call", current.text, tuple(args))

    def _map(self) -> Node:
        self._next()
        entries: list[Node] = []
        while self.peek() != "}":
            self._optional()
            entries.append(self.expression())
            self._expect(":")
            entries.append(self.expression())
            if self.peek() == ",":
                self._next()
            elif self.peek() != "}":
                raise ParseError(f"expected ',' or '}}', found {self.peek()!r}")
        self._next()
        return Node("map", args=tuple(entries))


def _is_name(node: Node) -> bool:
    return node.kind == "ident" or (node.kind == "select" and _is_name(node.args[0]))


def _dotted(node: Node) -> str:
    return node.name if node.kind == "ident" else f"{_dotted(node.args[0])}.{node.name}"
