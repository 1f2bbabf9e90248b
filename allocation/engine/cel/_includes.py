"""``includes``, the selector function of list-type attributes (KEP-5491, feature gate
DRAListTypeAttributes, alpha in 1.36; docs/cel.md, "List-type attributes").

With the gate on, an attribute may hold a list (``ints``, ``bools``, ``strings``,
``versions``), which a selector sees as a CEL list, and ``x.includes(v)`` asks whether a list
attribute holds ``v`` or a scalar one equals it, so one expression serves both shapes.
Upstream (dynamic-resource-allocation ``cel/compile.go`` v0.36.2, ``includesFunc``) compares
with each item's ``Equal`` (cel-go's equality: numbers across types, a Semver only with a
Semver, never an error) and refuses a list of more than :data:`MAX_ATTRIBUTE_VALUES` items
once it has looked at that many without a match. Its estimated cost is that maximum, whatever
the target (``draCostEstimator``). The function is declared only with the gate on: the API
server's new-expressions environment honours the gate, and every selector the planner reads
is checked as new (docs/v1.md, "Every document is a create").
"""

from __future__ import annotations

from allocation.engine.cel._k8s import Overload
from allocation.engine.cel._lists import cel_equal
from allocation.engine.v1_attribute_types import MAX_ATTRIBUTE_VALUES

__all__ = ["FUNCTIONS", "includes"]


def includes(target: object, arg: object) -> bool:
    """``target.includes(arg)``: an item of the list ``target`` equals ``arg``, or the scalar
    ``target`` does.

    Raises:
        ValueError: upstream's error for a list whose first 48 items do not hold ``arg`` and
            that has more.
    """
    if isinstance(target, list):
        for index, item in enumerate(target):
            if index >= MAX_ATTRIBUTE_VALUES:
                raise ValueError("'includes' function cannot be applied to lists longer "
                                 f"than {MAX_ATTRIBUTE_VALUES} values")
            if cel_equal(item, arg):
                return True
        return False
    return cel_equal(target, arg)


FUNCTIONS: tuple[Overload, ...] = (
    Overload("includes", "dra_includes_dyn_dyn", ("dyn", "dyn"), "bool", True, includes),
)
