"""Seed selectors rewritten as resource.k8s.io/v1 device selectors, on the parsed tree.

A seed selector (``manifests.md`` section 3) reads ``attributes`` and the typed maps
(``quantities``, ``versions``, ...) and compares quantities and versions with operators and
string literals. v1 (spec ``v1.md`` section 2) reads ``device.attributes["<driver>"]`` and
``device.capacity["<driver>"]`` and has no operator overloads, so:

- ``attributes.x`` / ``attributes["x"]`` / ``ints["x"]`` -> ``device.attributes["d"].x``;
  a quantity attribute (``quantities["m"]``, or ``attributes.m`` when the slices give ``m``
  the quantity type) -> ``device.capacity["d"].m`` (converted slices publish quantities as
  capacity); a renamed id is used under its new name;
- ``L op R`` with a quantity or version side -> ``L.compareTo(R) op 0``, a string literal
  side becoming ``quantity("...")`` or ``semver("<strict>")``;
- a list attribute (written as a comma-joined string) -> ``....split(",")`` (ints:
  ``.map(v, int(v))``);
- a missing attribute is a run-time error that means "no match" in the seeds but fails the
  whole scheduling attempt in v1 (spec section 2), so each operand of the top-level
  ``&&``/``||`` chains that reads attributes or capacities is guarded by presence tests
  (``"x" in device.attributes["d"] && ...``): a device without them does not match.

Every result is compiled with ``compile_device_selector``; what cannot be rewritten or does
not compile raises :class:`RewriteError` with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from allocation.engine.attributes import CEL_TYPE_MAPS
from allocation.engine.cel import CelCompileError, compile_device_selector
from allocation.engine.cel.syntax import (
    Node,
    ParseError,
    literal_value,
    parse,
    string_literal,
    unparse,
)
from allocation.engine.convert.names import attribute_id, strict_version

__all__ = ["RewriteError", "Rewritten", "rewrite_selector", "LIST_TYPES"]

_MAP_TYPES = {variable: kind for kind, variable in CEL_TYPE_MAPS.items()}
_MAPS = frozenset({*_MAP_TYPES, "attributes"})
_COMPARISONS = frozenset({"_<_", "_<=_", "_>_", "_>=_", "_==_", "_!=_"})
LIST_TYPES = frozenset({"intSlice", "stringSlice"})


class RewriteError(ValueError):
    """A seed selector with no v1 form; the message says why."""


@dataclass
class Rewritten:
    """A v1 expression and the lossy points met on the way (one message each)."""

    expression: str
    notes: list[str] = field(default_factory=list)


def _lit(text: str) -> Node:
    return Node("literal", "string", size=len(text), text=string_literal(text))


def _domain_map(field_name: str, driver: str) -> Node:
    device = Node("select", field_name, (Node("ident", "device"),))
    return Node("call", "_[_]", (device, _lit(driver)))


def _member(target: Node, name: str, *args: Node) -> Node:
    return Node("call", name, (target, *args), member=True)


class _Rewriter:
    def __init__(self, driver: str, types: Mapping[str, str]) -> None:
        self.driver = driver
        self.types = types
        self.notes: list[str] = []

    # -- references to the seed maps ---------------------------------------------------
    def reference(self, variable: str, name: str) -> tuple[Node, str | None]:
        kind = _MAP_TYPES.get(variable) or self.types.get(name)
        ident = attribute_id(name)
        if kind == "quantity":
            return Node("select", ident, (_domain_map("capacity", self.driver),)), "quantity"
        node = Node("select", ident, (_domain_map("attributes", self.driver),))
        if kind in LIST_TYPES:
            self.notes.append(f"{kind} attribute {name!r} is read from its comma-joined "
                              "string (an empty list reads as [\"\"])")
            node = _member(node, "split", _lit(","))
            if kind == "intSlice":
                var = Node("ident", "v")
                node = Node("macro", "map", (node, Node("call", "int", (var,))), var="v")
            return node, "list"
        return node, kind

    def whole_map(self, variable: str) -> Node:
        if variable == "quantities":
            return _domain_map("capacity", self.driver)
        if variable != "attributes":
            self.notes.append(f"{variable!r} (the attributes of one type) becomes all the "
                              "device's attributes")
        return _domain_map("attributes", self.driver)

    # -- the walk ----------------------------------------------------------------------
    def walk(self, node: Node) -> tuple[Node, str | None]:
        kind = node.kind
        if kind == "ident":
            if node.name in _MAPS:
                raise RewriteError(f"{node.name!r} is used as a whole map; only "
                                   f"{node.name}.x, {node.name}[\"x\"] and \"x\" in "
                                   f"{node.name} have a v1 form")
            return node, None
        if kind == "select" and _is_map(node.args[0]):
            return self.reference(node.args[0].name, node.name)
        if kind == "has" and _is_map(node.args[0]):
            target, _ = self.reference(node.args[0].name, node.name)
            while target.kind != "select":  # a list attribute: has() on the attribute
                target = target.args[0]
            return Node("has", target.name, target.args), "bool"
        if kind == "call" and node.name == "_[_]" and not node.member \
                and _is_map(node.args[0]):
            key = literal_value(node.args[1])
            if key is None:
                raise RewriteError(f"{node.args[0].name}[...] with a computed key has no "
                                   "v1 form (the attribute's type and v1 name are unknown)")
            return self.reference(node.args[0].name, key)
        if kind == "call" and node.name == "@in" and _is_map(node.args[1]):
            needle, _ = self.walk(node.args[0])
            key = literal_value(needle)
            if key is not None:  # the key under its v1 name
                needle = _lit(attribute_id(key))
            variable = node.args[1].name
            if variable == "attributes":
                both = [Node("call", "@in", (needle, _domain_map(m, self.driver)))
                        for m in ("attributes", "capacity")]
                return Node("call", "_||_", tuple(both)), "bool"
            return Node("call", "@in", (needle, self.whole_map(variable))), "bool"
        args = [self.walk(arg) for arg in node.args]
        nodes = tuple(arg for arg, _ in args)
        tags = [tag for _, tag in args]
        if kind == "call" and not node.member and node.name in _COMPARISONS:
            return self.compare(node.name, nodes, tags), "bool"
        if kind == "call" and not node.member and node.name in ("quantity", "semver"):
            return self.constructor(node.name, nodes), node.name.replace("semver", "version")
        rebuilt = Node(node.kind, node.name, nodes, node.size, node.member, node.var,
                       node.text)
        return rebuilt, None

    def constructor(self, name: str, args: tuple[Node, ...]) -> Node:
        if name == "semver" and len(args) == 1:
            text = literal_value(args[0])
            if isinstance(text, str):
                return Node("call", "semver", (_lit(self.version(text)),))
        return Node("call", name, args)

    def version(self, text: str) -> str:
        try:
            return strict_version(text)
        except ValueError as error:
            raise RewriteError(str(error)) from None

    def compare(self, operator: str, nodes: tuple[Node, ...], tags: list) -> Node:
        typed = next((tag for tag in tags if tag in ("quantity", "version")), None)
        if typed is None:
            return Node("call", operator, nodes)
        sides = []
        for side, tag in zip(nodes, tags, strict=True):
            if tag == typed:
                sides.append(side)
                continue
            text = literal_value(side)
            if text is None:
                raise RewriteError(f"a {typed} is compared with something that is not a "
                                   f"{typed} or a string literal: {unparse(side)}")
            if typed == "version":
                sides.append(Node("call", "semver", (_lit(self.version(text)),)))
            else:
                sides.append(Node("call", "quantity", (_lit(text),)))
        compared = _member(sides[0], "compareTo", sides[1])
        return Node("call", operator, (compared, Node("literal", "scalar", size=1, text="0")))


def _reads(node: Node, found: dict[str, Node]) -> None:
    """Collect the ``device.<map>["d"].id`` reads of ``node`` (outside ``has()``), keyed by
    their text, as presence tests."""
    if node.kind == "has":
        return
    if node.kind == "select" and node.args[0].kind == "call" and node.args[0].name == "_[_]":
        domain = node.args[0]
        field_node = domain.args[0]
        if field_node.kind == "select" and field_node.name in ("attributes", "capacity") \
                and field_node.args[0] == Node("ident", "device"):
            test = Node("call", "@in", (_lit(node.name), domain))
            found.setdefault(unparse(test), test)
            return
    for arg in node.args:
        _reads(arg, found)


def _guarded(node: Node) -> Node:
    """``node`` with presence tests before each operand of its ``&&``/``||`` chains."""
    if node.kind == "call" and not node.member and node.name in ("_&&_", "_||_"):
        operands: list[Node] = []
        for arg in node.args:
            guarded = _guarded(arg)
            if guarded.name == node.name and guarded.kind == "call" and not guarded.member:
                operands.extend(guarded.args)  # a && (b && c) is a && b && c
            else:
                operands.append(guarded)
        return Node("call", node.name, tuple(operands))
    found: dict[str, Node] = {}
    _reads(node, found)
    if not found:
        return node
    return Node("call", "_&&_", (*found.values(), node))


def _is_map(node: Node) -> bool:
    return node.kind == "ident" and node.name in _MAPS


def rewrite_selector(source: str, driver: str, types: Mapping[str, str], *,
                     guard: bool = True) -> Rewritten:
    """``source`` (a seed selector over devices of ``driver``) as a v1 device selector.

    ``types`` maps the driver's seed attribute names to their seed type (``quantity``,
    ``version``, ``int``, ...), as the slices publish them; names it lacks are attributes.
    ``guard``: add the presence tests (without them a device lacking a read attribute fails
    scheduling in v1 instead of not matching).

    Returns:
        The v1 expression, already compiled successfully, and the lossy points.
    Raises:
        RewriteError: no v1 form, or the result does not compile (the compiler's message).
    """
    try:
        tree = parse(source)
    except ParseError as error:
        raise RewriteError(f"cannot parse the selector: {error}") from None
    rewriter = _Rewriter(driver, types)
    node, _ = rewriter.walk(tree)
    expression = unparse(_guarded(node) if guard else node)
    try:
        compile_device_selector(expression)
    except CelCompileError as error:
        raise RewriteError(f"the v1 form {expression!r} does not compile: {error}") from None
    return Rewritten(expression, list(dict.fromkeys(rewriter.notes)))
