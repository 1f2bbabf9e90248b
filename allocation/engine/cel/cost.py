"""The cost of a CEL expression, estimated before it runs, and the limits an estimate must fit.

The library (cel-expr-python) has no cost limit and no limit on the size of the values an
evaluation builds, so a 1 KB expression can ask for gigabytes (``[s].map(a, a+a+a+a)``
chained). Kubernetes refuses CEL whose *estimated* cost exceeds a limit; we do the same, with
a model of cel-go's cost estimator (``checker/cost.go``) as Kubernetes configures it: the size
of every input string, list and map is bounded by known maxima, a comprehension costs the
estimated size of its range times the cost of one iteration, and concatenation adds sizes, so
a chain of maps multiplies. ``docs/cel.md`` ("Cost and budgets") describes the model.

This module is the estimate: the input bounds it assumes, the walk of cel-go's model over a
parsed expression, and the limits (:data:`MAX_COST`, :data:`MAX_VALUE_SIZE`) its result is
judged by. When an expression is checked (at compile time, and again before an evaluation over
a larger input) is the budget's business (``cel/budget.py``), kept apart so the model can be
read, and compared with cel-go's, on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from allocation.engine.attributes import CEL_TYPE_MAPS
from allocation.engine.cel._cost_library import FORMAT_NAME, NET_TEXT, library_cost
from allocation.engine.cel._cost_shapes import (
    REGEX_FACTOR,
    SCALAR,
    STRING_FACTOR,
    Shape,
    factor,
    item_of,
    key_of,
    tagged,
    union,
)
from allocation.engine.cel._errors import CelCostError
from allocation.engine.cel._parser import Node, ParseError, parse
from allocation.engine.v1_attribute_types import MAX_ATTRIBUTE_VALUES

__all__ = [
    "MAX_COST",
    "MAX_VALUE_SIZE",
    "InputBounds",
    "DECLARED_BOUNDS",
    "DEVICE_BOUNDS",
    "Estimate",
    "estimate",
    "estimate_tree",
    "parse_for_cost",
]

#: Kubernetes' limit on the estimated cost of a CEL device selector
#: (``resource.k8s.io`` ``CELSelectorExpressionMaxCost``); also the per-evaluation budget.
MAX_COST = 1_000_000
#: The largest string (characters), bytes or list (items) an expression may build.
MAX_VALUE_SIZE = 1_048_576

_LIST_BASE, _MAP_BASE, _STRUCT_BASE = 10, 30, 40  # cel-go create*BaseCost
_SCALAR_TEXT = 40  # the longest text string() makes of a number, timestamp or duration
@dataclass(frozen=True, slots=True)
class InputBounds:
    """The largest string or bytes value (characters; map keys included), list (items) and
    map (entries) an expression reads from its variables."""

    string: int
    list: int
    map: int

    def within(self, other: InputBounds) -> bool:
        """Whether no bound exceeds the same bound of ``other``."""
        return self.string <= other.string and self.list <= other.list and self.map <= other.map

    def beyond(self, other: InputBounds) -> str:
        """The bounds exceeding those of ``other``, e.g. "strings up to 2,048 characters"."""
        parts = [f"{noun} up to {mine:,} {unit}" for noun, unit, mine, theirs in (
            ("strings", "characters", self.string, other.string),
            ("lists", "items", self.list, other.list),
            ("maps", "entries", self.map, other.map)) if mine > theirs]
        return ", ".join(parts)


#: The input sizes assumed when an expression is validated: a device with at most 128
#: attributes, strings of at most 256 characters, slices of at most 128 items. Larger inputs
#: are not refused: each evaluation over one is checked against the runtime budget instead.
DECLARED_BOUNDS = InputBounds(string=256, list=128, map=128)
#: The bounds resource.k8s.io/v1 declares for a device (``device`` variable, kind "device"):
#: attribute values and names at most 64 characters, at most 32 attributes and capacities,
#: a list-type attribute at most 48 items (upstream declares its attribute type's maximum as
#: the larger of 64 and 48, for a string or a list alike: ``cel/compile.go`` newCompiler).
DEVICE_BOUNDS = InputBounds(string=64, list=64, map=32)


@dataclass(frozen=True, slots=True)
class Estimate:
    """The estimated worst-case cost, and the size of the largest value the expression builds."""

    cost: int
    largest: int

    def problem(self, limit: str = "limit") -> str | None:
        """Why this estimate is over the limits (called ``limit``), or None."""
        if self.cost > MAX_COST:
            return f"estimated cost {self.cost:,} exceeds the {limit} of {MAX_COST:,}"
        if self.largest > MAX_VALUE_SIZE:
            return (f"it may build a string or list of {self.largest:,} characters or items, "
                    f"more than the {limit} of {MAX_VALUE_SIZE:,}")
        return None


def _selector_shapes(bounds: InputBounds) -> dict[str, Shape]:
    text, key = Shape("string", bounds.string), Shape("string", bounds.string)
    values = {"quantity": tagged(bounds.string), "version": tagged(bounds.string),
              "int": SCALAR, "bool": SCALAR, "string": text,
              "intSlice": Shape("list", bounds.list, SCALAR),
              "stringSlice": Shape("list", bounds.list, text)}
    shapes = {variable: Shape("map", bounds.map, values[kind], key)
              for kind, variable in CEL_TYPE_MAPS.items()}
    any_value = Shape("dyn", max(bounds.string, bounds.list), Shape("dyn", bounds.string))
    shapes["attributes"] = Shape("map", bounds.map, any_value, key)
    return shapes


def _device_shape(bounds: InputBounds) -> Shape:
    name = Shape("string", bounds.string)

    def domains(value: Shape) -> Shape:
        return Shape("map", bounds.map, Shape("map", bounds.map, value, name), name)

    return Shape("dyn", bounds.map, fields=(
        ("driver", name), ("allowMultipleAllocations", SCALAR),
        ("attributes", domains(Shape("dyn", bounds.string))),
        ("capacity", domains(tagged(bounds.string)))))


def _expression_shapes(variables: Mapping[str, str], bounds: InputBounds) -> dict[str, Shape]:
    largest = max(bounds.string, bounds.list, bounds.map)
    any_value = Shape("dyn", largest)
    kinds = {"device": _device_shape(bounds), "dyn": any_value,
             "string": Shape("string", bounds.string),
             "bytes": Shape("bytes", bounds.string), "tagged": tagged(bounds.string),
             "list": Shape("list", bounds.list, any_value),
             "map": Shape("map", bounds.map, any_value, Shape("dyn", bounds.string))}
    return {name: kinds.get(kind, SCALAR) for name, kind in variables.items()}


def estimate(source: str, variables: Mapping[str, str] | None = None,
             bounds: InputBounds = DECLARED_BOUNDS) -> Estimate:
    """The estimate for ``source`` in the selector environment, or over ``variables`` (name ->
    kind as for ``compile_expression``), when inputs stay within ``bounds``.

    Raises:
        CelCostError: the source cannot be analysed (it then cannot be used).
    """
    return estimate_tree(parse_for_cost(source), variables, bounds)


def parse_for_cost(source: str) -> Node:
    """The tree of ``source`` the estimate walks (:func:`estimate_tree`).

    Raises:
        CelCostError: the source cannot be analysed (it then cannot be used).
    """
    try:
        return parse(source)
    except (ParseError, RecursionError) as error:
        raise CelCostError(f"CEL expression cannot be analysed for its cost: {error}") from None


def estimate_tree(tree: Node, variables: Mapping[str, str] | None,
                  bounds: InputBounds) -> Estimate:
    """:func:`estimate` of a tree :func:`parse_for_cost` gave (a budget parses once and
    estimates again for each larger input).

    Raises:
        CelCostError: the tree is too deep to analyse.
    """
    shapes = (_selector_shapes(bounds) if variables is None
              else _expression_shapes(variables, bounds))
    coster = _Coster(shapes)
    try:
        cost, _shape = coster.cost(tree)
    except RecursionError:
        raise CelCostError("CEL expression cannot be analysed for its cost: too deep") from None
    return Estimate(cost, coster.largest)


class _Coster:
    """cel-go's estimator over our tree: ``cost`` gives (worst-case cost, result shape)."""

    def __init__(self, variables: dict[str, Shape]) -> None:
        self.variables = variables
        self.locals: dict[str, list[Shape]] = {}
        self.largest = 0

    def _built(self, shape: Shape) -> Shape:
        self.largest = max(self.largest, shape.size)
        return shape

    def cost(self, node: Node) -> tuple[int, Shape]:
        kind = node.kind
        if kind == "literal":
            return 0, SCALAR if node.name == "scalar" else Shape(node.name, node.size)
        if kind == "ident":
            scope = self.locals.get(node.name)
            return 1, scope[-1] if scope else self.variables.get(node.name, SCALAR)
        if kind in ("select", "has"):
            cost, shape = self.cost(node.args[0])
            if kind == "has":
                return cost + 1, SCALAR
            return cost + 1, dict(shape.fields).get(node.name) or item_of(shape)
        if kind == "unary":
            cost, _shape = self.cost(node.args[0])
            return cost + node.size, SCALAR
        if kind == "macro":
            return self._macro(node)
        costs, shapes = [], []
        for arg in node.args:
            cost, shape = self.cost(arg)
            costs.append(cost)
            shapes.append(shape)
        if kind == "list":
            item = shapes[0] if shapes else Shape("scalar", 0)  # ["a"]: a list of strings
            for shape in shapes:
                item = union(item, shape)
            return _LIST_BASE + sum(costs), self._built(Shape("list", len(shapes), item))
        if kind == "map":
            keys, values = Shape("scalar", 0), Shape("scalar", 0)
            for key, value in zip(shapes[::2], shapes[1::2], strict=True):
                keys, values = union(keys, key), union(values, value)
            return _MAP_BASE + sum(costs), self._built(Shape("map", len(shapes) // 2, values,
                                                              keys))
        if kind == "struct":
            return _STRUCT_BASE + sum(costs), Shape("dyn", max((s.size for s in shapes),
                                                                default=1))
        return self._call(node.name, costs, shapes)

    def _call(self, name: str, costs: list[int], shapes: list[Shape]) -> tuple[int, Shape]:
        args = sum(costs)
        if name in ("_&&_", "_||_"):
            return args, SCALAR
        if name == "_?_:_":
            return costs[0] + max(costs[1], costs[2]), union(shapes[1], shapes[2])
        if name == "_[_]":
            return args + 1, item_of(shapes[0])
        if name == "_+_":
            return self._add(args, shapes[0], shapes[1])
        if name == "_==_" and shapes[0].kind == shapes[1].kind in ("url", "format"):
            # cost.go: a URL's text (the right operand's size, as upstream reads it), or a
            # format's name of at most 64 characters, traversed.
            size = shapes[1].size if shapes[0].kind == "url" else FORMAT_NAME
            return args + factor(size, STRING_FACTOR), SCALAR
        if name in ("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"):
            # As cel-go: comparing stops at the end of the shorter operand.
            return args + factor(min(shapes[0].size, shapes[1].size), STRING_FACTOR), SCALAR
        if name == "@in":
            return args + (1 if shapes[1].kind == "map" else shapes[1].size), SCALAR
        return self._function(name, args, shapes)

    def _add(self, args: int, left: Shape, right: Shape) -> tuple[int, Shape]:
        if left.kind == "scalar" and right.kind == "scalar":
            return args + 1, SCALAR
        # Strings, bytes and (unlike cel-go, whose lists are views) lists are copied.
        size = left.size + right.size
        kind = left.kind if left.kind == right.kind else "dyn"
        shape = Shape(kind, size, union(item_of(left), item_of(right)),
                       union(key_of(left), key_of(right)))
        return args + factor(size, STRING_FACTOR), self._built(shape)

    def _function(self, name: str, args: int, shapes: list[Shape]) -> tuple[int, Shape]:
        first = shapes[0].size if shapes else 0
        last = shapes[-1].size if shapes else 0
        if name == "matches":
            return args + (factor(first + 1, STRING_FACTOR)
                           * factor(last, REGEX_FACTOR)), SCALAR
        if name == "contains":
            return args + factor(first, STRING_FACTOR) * factor(last, STRING_FACTOR), SCALAR
        if name in ("startsWith", "endsWith"):
            return args + factor(last, STRING_FACTOR), SCALAR
        if name == "dyn" and shapes:
            return args + 1, shapes[0]
        if name == "includes":  # upstream's draCostEstimator: the longest list, whatever
            return args + MAX_ATTRIBUTE_VALUES, SCALAR  # the target (cel/_includes.py)
        if name == "string" and shapes:
            longest = NET_TEXT if shapes[0].kind in ("ip", "cidr") else first
            text = Shape("string", max(longest, _SCALAR_TEXT))
            return args + max(1, factor(first, STRING_FACTOR)), self._built(text)
        if name == "bytes" and shapes:
            data = Shape("bytes", 4 * first)  # a character is at most 4 bytes of UTF-8
            return args + max(1, factor(first, STRING_FACTOR)), self._built(data)
        known = library_cost(name, args, shapes)
        if known is not None:
            cost, shape, built = known
            return cost, self._built(shape) if built else shape
        return args + 1, SCALAR  # every other function of the environment gives a scalar

    def _macro(self, node: Node) -> tuple[int, Shape]:
        range_cost, range_shape = self.cost(node.args[0])
        count = range_shape.size
        if range_shape.kind == "map":
            variable = key_of(range_shape)
        elif range_shape.kind == "list":
            variable = item_of(range_shape)
        else:
            variable = union(item_of(range_shape), key_of(range_shape))
        self.locals.setdefault(node.var, []).append(variable)
        try:
            parts = [self.cost(arg) for arg in node.args[1:]]
        finally:
            self.locals[node.var].pop()
        body = sum(cost for cost, _shape in parts)
        # cel-go's expansion of each macro: accumulator init + result, and per iteration the
        # loop condition + step (with their identifiers and calls).
        if node.name == "all":
            return range_cost + 1 + count * (3 + body), SCALAR
        if node.name == "exists":
            return range_cost + 1 + count * (4 + body), SCALAR
        if node.name == "exists_one":
            return range_cost + 2 + count * (2 + body), SCALAR
        if node.name == "filter":
            result = Shape("list", count, variable)
            return range_cost + 11 + count * (13 + body), self._built(result)
        result = Shape("list", count, parts[-1][1])
        return range_cost + 11 + count * (12 + body), self._built(result)
