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

import math
from collections.abc import Mapping
from dataclasses import dataclass

from allocation.engine.attributes import CEL_TYPE_MAPS
from allocation.engine.cel._errors import CelCostError
from allocation.engine.cel._parser import Node, ParseError, parse

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

_STRING_FACTOR = 0.1  # cel-go common.StringTraversalCostFactor
_REGEX_FACTOR = 0.25  # cel-go common.RegexStringLengthCostFactor
_LIST_BASE, _MAP_BASE, _STRUCT_BASE = 10, 30, 40  # cel-go create*BaseCost
_SCALAR_TEXT = 40  # the longest text string() makes of a number, timestamp or duration
_TAG_TEXT = 1_024  # canonical text may be longer than its source: "1e1000" has 1,001 digits
_NET_TEXT = 43  # the longest canonical IP or CIDR text: eight groups of four hex digits, /128
_ADDRESS_BYTES = 16  # an IPv6 address: upstream's containsIP/containsCIDR compare 2 x 16 bytes
_FORMAT_NAME = 64  # Kubernetes' MaxFormatSize, the bound of a format's name (its equality)
_FORMAT_REGEX = 128  # Kubernetes' MaxNameFormatRegexSize: validate() costs it per character
#: The URL library's accessors and the format library's constants (``_url``, ``_format``).
_URL_MEMBERS = frozenset({"getScheme", "getHost", "getHostname", "getPort", "getEscapedPath",
                          "getQuery"})
_FORMATS = frozenset({"named", "dns1123Label", "dns1123Subdomain", "dns1035Label",
                      "qualifiedName", "dns1123LabelPrefix", "dns1123SubdomainPrefix",
                      "dns1035LabelPrefix", "labelValue", "uri", "uuid", "byte", "date",
                      "datetime"})
_UNKNOWN = 2**64 - 1  # cel-go's size of what its estimator cannot size (math.MaxUint64)
#: Kubernetes' lists library (``_lists``) and the strings extension's functions of two names.
_LIST_FUNCTIONS = frozenset({"isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"})


#: The functions of Kubernetes' IP and CIDR libraries (``_net``), as the tree names them.
_NET_FUNCTIONS = frozenset({
    "ip", "cidr", "isIP", "isCIDR", "isCanonical", "family", "isUnspecified", "isLoopback",
    "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "containsIP",
    "containsCIDR", "masked", "prefixLength",
})


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
#: attribute values and names at most 64 characters, at most 32 attributes and capacities.
DEVICE_BOUNDS = InputBounds(string=64, list=32, map=32)


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


@dataclass(frozen=True, slots=True)
class _Shape:
    """What the estimate knows of a value: its kind ("string", "bytes", "list", "map",
    "scalar", "dyn"), its largest size, and the shapes of its items (values) and keys; a
    missing item or key shape means "no larger than the container" (inputs); ``fields`` are
    the shapes of an object's fields (``device``)."""

    kind: str
    size: int
    item: _Shape | None = None
    key: _Shape | None = None
    fields: tuple[tuple[str, _Shape], ...] = ()


_SCALAR = _Shape("scalar", 1)
_IP, _CIDR = _Shape("ip", 1), _Shape("cidr", 1)  # net.IP and net.CIDR values (opaque)


def _item(shape: _Shape) -> _Shape:
    if shape.item is not None:
        return shape.item
    return _SCALAR if shape.kind in ("scalar", "string", "bytes") else _Shape("dyn", shape.size)


def _key(shape: _Shape) -> _Shape:
    if shape.key is not None:
        return shape.key
    return _SCALAR if shape.kind in ("scalar", "string", "bytes") else _Shape("dyn", shape.size)


def _union(a: _Shape, b: _Shape) -> _Shape:
    if a is b:
        return a
    kind = a.kind if a.kind == b.kind else "dyn"
    if a.item is None and b.item is None and a.key is None and b.key is None:
        return _Shape(kind, max(a.size, b.size))
    return _Shape(kind, max(a.size, b.size), _union(_item(a), _item(b)), _union(_key(a), _key(b)))


def _tagged(text: int) -> _Shape:
    return _Shape("map", 1, _Shape("string", text), _Shape("string", 4))


def _factor(size: int, factor: float) -> int:
    return math.ceil(size * factor)


def _selector_shapes(bounds: InputBounds) -> dict[str, _Shape]:
    text, key = _Shape("string", bounds.string), _Shape("string", bounds.string)
    values = {"quantity": _tagged(bounds.string), "version": _tagged(bounds.string),
              "int": _SCALAR, "bool": _SCALAR, "string": text,
              "intSlice": _Shape("list", bounds.list, _SCALAR),
              "stringSlice": _Shape("list", bounds.list, text)}
    shapes = {variable: _Shape("map", bounds.map, values[kind], key)
              for kind, variable in CEL_TYPE_MAPS.items()}
    any_value = _Shape("dyn", max(bounds.string, bounds.list), _Shape("dyn", bounds.string))
    shapes["attributes"] = _Shape("map", bounds.map, any_value, key)
    return shapes


def _device_shape(bounds: InputBounds) -> _Shape:
    name = _Shape("string", bounds.string)

    def domains(value: _Shape) -> _Shape:
        return _Shape("map", bounds.map, _Shape("map", bounds.map, value, name), name)

    return _Shape("dyn", bounds.map, fields=(
        ("driver", name), ("allowMultipleAllocations", _SCALAR),
        ("attributes", domains(_Shape("dyn", bounds.string))),
        ("capacity", domains(_tagged(bounds.string)))))


def _expression_shapes(variables: Mapping[str, str], bounds: InputBounds) -> dict[str, _Shape]:
    largest = max(bounds.string, bounds.list, bounds.map)
    any_value = _Shape("dyn", largest)
    kinds = {"device": _device_shape(bounds), "dyn": any_value,
             "string": _Shape("string", bounds.string),
             "bytes": _Shape("bytes", bounds.string), "tagged": _tagged(bounds.string),
             "list": _Shape("list", bounds.list, any_value),
             "map": _Shape("map", bounds.map, any_value, _Shape("dyn", bounds.string))}
    return {name: kinds.get(kind, _SCALAR) for name, kind in variables.items()}


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

    def __init__(self, variables: dict[str, _Shape]) -> None:
        self.variables = variables
        self.locals: dict[str, list[_Shape]] = {}
        self.largest = 0

    def _built(self, shape: _Shape) -> _Shape:
        self.largest = max(self.largest, shape.size)
        return shape

    def cost(self, node: Node) -> tuple[int, _Shape]:
        kind = node.kind
        if kind == "literal":
            return 0, _SCALAR if node.name == "scalar" else _Shape(node.name, node.size)
        if kind == "ident":
            scope = self.locals.get(node.name)
            return 1, scope[-1] if scope else self.variables.get(node.name, _SCALAR)
        if kind in ("select", "has"):
            cost, shape = self.cost(node.args[0])
            if kind == "has":
                return cost + 1, _SCALAR
            return cost + 1, dict(shape.fields).get(node.name) or _item(shape)
        if kind == "unary":
            cost, _shape = self.cost(node.args[0])
            return cost + node.size, _SCALAR
        if kind == "macro":
            return self._macro(node)
        costs, shapes = [], []
        for arg in node.args:
            cost, shape = self.cost(arg)
            costs.append(cost)
            shapes.append(shape)
        if kind == "list":
            item = shapes[0] if shapes else _Shape("scalar", 0)  # ["a"]: a list of strings
            for shape in shapes:
                item = _union(item, shape)
            return _LIST_BASE + sum(costs), self._built(_Shape("list", len(shapes), item))
        if kind == "map":
            keys, values = _Shape("scalar", 0), _Shape("scalar", 0)
            for key, value in zip(shapes[::2], shapes[1::2], strict=True):
                keys, values = _union(keys, key), _union(values, value)
            return _MAP_BASE + sum(costs), self._built(_Shape("map", len(shapes) // 2, values,
                                                              keys))
        if kind == "struct":
            return _STRUCT_BASE + sum(costs), _Shape("dyn", max((s.size for s in shapes),
                                                                default=1))
        return self._call(node.name, costs, shapes)

    def _call(self, name: str, costs: list[int], shapes: list[_Shape]) -> tuple[int, _Shape]:
        args = sum(costs)
        if name in ("_&&_", "_||_"):
            return args, _SCALAR
        if name == "_?_:_":
            return costs[0] + max(costs[1], costs[2]), _union(shapes[1], shapes[2])
        if name == "_[_]":
            return args + 1, _item(shapes[0])
        if name == "_+_":
            return self._add(args, shapes[0], shapes[1])
        if name == "_==_" and shapes[0].kind == shapes[1].kind in ("url", "format"):
            # cost.go: a URL's text (the right operand's size, as upstream reads it), or a
            # format's name of at most 64 characters, traversed.
            size = shapes[1].size if shapes[0].kind == "url" else _FORMAT_NAME
            return args + _factor(size, _STRING_FACTOR), _SCALAR
        if name in ("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"):
            # As cel-go: comparing stops at the end of the shorter operand.
            return args + _factor(min(shapes[0].size, shapes[1].size), _STRING_FACTOR), _SCALAR
        if name == "@in":
            return args + (1 if shapes[1].kind == "map" else shapes[1].size), _SCALAR
        return self._function(name, args, shapes)

    def _add(self, args: int, left: _Shape, right: _Shape) -> tuple[int, _Shape]:
        if left.kind == "scalar" and right.kind == "scalar":
            return args + 1, _SCALAR
        # Strings, bytes and (unlike cel-go, whose lists are views) lists are copied.
        size = left.size + right.size
        kind = left.kind if left.kind == right.kind else "dyn"
        shape = _Shape(kind, size, _union(_item(left), _item(right)),
                       _union(_key(left), _key(right)))
        return args + _factor(size, _STRING_FACTOR), self._built(shape)

    def _function(self, name: str, args: int, shapes: list[_Shape]) -> tuple[int, _Shape]:
        first = shapes[0].size if shapes else 0
        last = shapes[-1].size if shapes else 0
        if name == "matches":
            return args + (_factor(first + 1, _STRING_FACTOR)
                           * _factor(last, _REGEX_FACTOR)), _SCALAR
        if name == "contains":
            return args + _factor(first, _STRING_FACTOR) * _factor(last, _STRING_FACTOR), _SCALAR
        if name in ("startsWith", "endsWith"):
            return args + _factor(last, _STRING_FACTOR), _SCALAR
        if name == "dyn" and shapes:
            return args + 1, shapes[0]
        if name == "string" and shapes:
            longest = _NET_TEXT if shapes[0].kind in ("ip", "cidr") else first
            text = _Shape("string", max(longest, _SCALAR_TEXT))
            return args + max(1, _factor(first, _STRING_FACTOR)), self._built(text)
        if name == "bytes" and shapes:
            data = _Shape("bytes", 4 * first)  # a character is at most 4 bytes of UTF-8
            return args + max(1, _factor(first, _STRING_FACTOR)), self._built(data)
        if name in ("quantity", "semver", "isQuantity", "isSemver"):
            parse_cost = max(1, _factor(last, _STRING_FACTOR))
            result = _tagged(last + _TAG_TEXT) if name in ("quantity", "semver") else _SCALAR
            return args + parse_cost, result
        if name in _NET_FUNCTIONS:
            return self._net(name, args, shapes)
        if name in ("url", "validate") or name in _URL_MEMBERS or name in _FORMATS:
            return self._url_or_format(name, args, shapes)
        if name == "value" and shapes and shapes[0].kind == "format":
            return args + 1, shapes[0]  # format.named(n).value(): a format (its equality)
        if name in _LIST_FUNCTIONS and shapes:
            return args + self._list(shapes[0]), _item(shapes[0]) if name in (
                "min", "max") else _SCALAR
        if name in ("find", "findAll") and len(shapes) > 1:
            # As matches; the result is no longer than the string, nor are its matches.
            cost = _factor(first + 1, _STRING_FACTOR) * _factor(shapes[1].size, _REGEX_FACTOR)
            text = _Shape("string", first)
            return args + cost, text if name == "find" else self._built(
                _Shape("list", first, text))
        if name in ("add", "sub") and shapes:
            text = max(_item(s).size for s in shapes)
            return args + 1, _tagged(text + _TAG_TEXT)
        return args + 1, _SCALAR  # every other function of the environment gives a scalar

    def _url_or_format(self, name: str, args: int, shapes: list[_Shape]) -> tuple[int, _Shape]:
        """The URL and format libraries as Kubernetes' estimator charges them (cost.go):
        ``url(s)`` traverses ``s`` and is as large; accessors, ``format.named`` and the
        format constants cost 1 (our tree reads ``format.x()`` as a member call on
        ``format``: its 1 is taken off); ``validate(s)`` traverses ``s`` once per
        character of the longest format regex. A URL's parts are at most its length."""
        size = shapes[-1].size if shapes else 0
        if name == "url":
            return args + _factor(size, _STRING_FACTOR), _Shape("url", size)
        if name == "validate":
            return args + _factor(_factor(size, _STRING_FACTOR), _FORMAT_REGEX
                                  * _REGEX_FACTOR), _SCALAR
        if name in _FORMATS:
            return args, _Shape("format", 1)
        text = _Shape("string", size)
        if name == "getQuery":
            return args + 1, _Shape("map", size, _Shape("list", size, text), text)
        return args + 1, text

    def _net(self, name: str, args: int, shapes: list[_Shape]) -> tuple[int, _Shape]:
        """The IP and CIDR libraries as Kubernetes' estimator charges them
        (k8s.io/apiserver pkg/cel/library/cost.go): parsing a string traverses it,
        ``ip.isCanonical`` twice; accessors cost 1; ``containsIP`` compares two addresses of
        up to 16 bytes, ``containsCIDR`` also a third and the prefix lengths, and a string
        argument adds its parse. cel-go resolves ``ip.isCanonical`` as one function, where
        our tree has a member call on ``ip``: its 1 is taken off."""
        last = shapes[-1].size if shapes else 0
        if name in ("containsIP", "containsCIDR") and len(shapes) == 2:
            cost = _factor(2 * _ADDRESS_BYTES, _STRING_FACTOR)
            if name == "containsCIDR":
                cost += _factor(_ADDRESS_BYTES, _STRING_FACTOR) + 1
            if shapes[1].kind != ("ip" if name == "containsIP" else "cidr"):
                cost += _factor(last, _STRING_FACTOR)  # the string overload (or dyn: either)
            return args + cost, _SCALAR
        if name == "isCanonical":
            return args - 1 + _factor(last, 2 * _STRING_FACTOR), _SCALAR
        if len(shapes) == 1 and shapes[0].kind == "cidr":  # members of a CIDR
            return args + 1, {"ip": _IP, "masked": _CIDR}.get(name, _SCALAR)
        if name in ("ip", "cidr", "isIP", "isCIDR") and shapes:
            result = {"ip": _IP, "cidr": _CIDR}.get(name, _SCALAR)
            return args + _factor(last, _STRING_FACTOR), result
        return args + 1, _SCALAR  # the members of an IP

    def _list(self, target: _Shape) -> int:
        """k8s.io/apiserver pkg/cel/library/cost.go for the lists library (and, by name, the
        strings extension's ``indexOf``/``lastIndexOf``): 1 per element, plus traversing
        each string or bytes element, whose size cel-go cannot estimate: its element node has
        no path, and no list of the device is reached by one, so it is unbounded there and
        any such call is over the limit; a string receiver is traversed once."""
        if target.kind != "list":
            return _factor(target.size, _STRING_FACTOR)
        element = 1
        if _item(target).kind in ("string", "bytes"):
            element += _factor(_UNKNOWN, _STRING_FACTOR)
        return min(target.size * element, _UNKNOWN)

    def _macro(self, node: Node) -> tuple[int, _Shape]:
        range_cost, range_shape = self.cost(node.args[0])
        count = range_shape.size
        if range_shape.kind == "map":
            variable = _key(range_shape)
        elif range_shape.kind == "list":
            variable = _item(range_shape)
        else:
            variable = _union(_item(range_shape), _key(range_shape))
        self.locals.setdefault(node.var, []).append(variable)
        try:
            parts = [self.cost(arg) for arg in node.args[1:]]
        finally:
            self.locals[node.var].pop()
        body = sum(cost for cost, _shape in parts)
        # cel-go's expansion of each macro: accumulator init + result, and per iteration the
        # loop condition + step (with their identifiers and calls).
        if node.name == "all":
            return range_cost + 1 + count * (3 + body), _SCALAR
        if node.name == "exists":
            return range_cost + 1 + count * (4 + body), _SCALAR
        if node.name == "exists_one":
            return range_cost + 2 + count * (2 + body), _SCALAR
        if node.name == "filter":
            result = _Shape("list", count, variable)
            return range_cost + 11 + count * (13 + body), self._built(result)
        result = _Shape("list", count, parts[-1][1])
        return range_cost + 11 + count * (12 + body), self._built(result)
