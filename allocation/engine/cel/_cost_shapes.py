"""What the cost estimate knows of a value (its kind, largest size and parts), and the
arithmetic cel-go's estimator does on sizes: the vocabulary ``cost`` and ``_cost_library``
share (docs/cel.md, "Cost and budgets")."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["STRING_FACTOR", "REGEX_FACTOR", "Shape", "SCALAR", "item_of", "key_of", "union",
           "tagged", "factor"]

STRING_FACTOR = 0.1  # cel-go common.StringTraversalCostFactor
REGEX_FACTOR = 0.25  # cel-go common.RegexStringLengthCostFactor


@dataclass(frozen=True, slots=True)
class Shape:
    """What the estimate knows of a value: its kind ("string", "bytes", "list", "map",
    "scalar", "dyn"), its largest size, and the shapes of its items (values) and keys; a
    missing item or key shape means "no larger than the container" (inputs); ``fields`` are
    the shapes of an object's fields (``device``)."""

    kind: str
    size: int
    item: Shape | None = None
    key: Shape | None = None
    fields: tuple[tuple[str, Shape], ...] = ()


SCALAR = Shape("scalar", 1)


def item_of(shape: Shape) -> Shape:
    """The shape of an item (a value, for a map) of a container of ``shape``."""
    if shape.item is not None:
        return shape.item
    return SCALAR if shape.kind in ("scalar", "string", "bytes") else Shape("dyn", shape.size)


def key_of(shape: Shape) -> Shape:
    """The shape of a key of a map of ``shape``."""
    if shape.key is not None:
        return shape.key
    return SCALAR if shape.kind in ("scalar", "string", "bytes") else Shape("dyn", shape.size)


def union(a: Shape, b: Shape) -> Shape:
    """The smallest shape either of ``a`` and ``b`` fits (``?:``'s branches, list items)."""
    if a is b:
        return a
    kind = a.kind if a.kind == b.kind else "dyn"
    if a.item is None and b.item is None and a.key is None and b.key is None:
        return Shape(kind, max(a.size, b.size))
    return Shape(kind, max(a.size, b.size), union(item_of(a), item_of(b)),
                 union(key_of(a), key_of(b)))


def tagged(text: int) -> Shape:
    """An opaque value (Quantity, Semver) whose canonical text is at most ``text`` long."""
    return Shape("map", 1, Shape("string", text), Shape("string", 4))


def factor(size: int, rate: float) -> int:
    """cel-go's cost of traversing ``size`` units at ``rate`` each, rounded up."""
    return math.ceil(size * rate)


