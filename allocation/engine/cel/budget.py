"""The cost budget of one CEL expression: checked when it is compiled, and again before each
evaluation whose input is larger than the sizes assumed then.

An expression is checked twice against the same limits (``docs/cel.md``, "Cost and
budgets"): when it is compiled, with the declared input bounds (``DECLARED_BOUNDS``, or a
device's ``DEVICE_BOUNDS``), and before each evaluation whose input is larger than those
bounds, with the sizes of that input (the runtime budget). This module holds that life cycle
(measuring an input, remembering one answer per rounded size); the estimate itself, cel-go's
model, is ``cel/cost.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from allocation.engine.cel._errors import CelCostError
from allocation.engine.cel.cost import (
    DECLARED_BOUNDS,
    InputBounds,
    estimate_tree,
    parse_for_cost,
)

__all__ = ["Budget", "measure"]

_UNBOUNDED = InputBounds(string=2**40, list=2**40, map=2**40)


def measure(values: Iterable[object]) -> InputBounds:
    """The bounds ``values`` (plain CEL input: str, bytes, lists, tuples, dicts) fit in."""
    longest = items = entries = 0
    pending = list(values)
    while pending:
        value = pending.pop()
        kind = type(value)
        if kind is str or kind is bytes:
            longest = max(longest, len(value))
        elif kind is dict or isinstance(value, Mapping):
            entries = max(entries, len(value))
            pending.extend(value.keys())
            pending.extend(value.values())
        elif kind is list or kind is tuple:
            items = max(items, len(value))
            pending.extend(value)
        elif isinstance(value, (str, bytes)):
            longest = max(longest, len(value))
        elif isinstance(value, (list, tuple)):
            items = max(items, len(value))
            pending.extend(value)
    return InputBounds(longest, items, entries)


class Budget:
    """The cost check of one expression: at construction with the declared bounds, then
    :meth:`check` before each evaluation."""

    __slots__ = ("_tree", "_variables", "_declared", "fixed", "estimated", "_seen")

    def __init__(self, source: str, variables: Mapping[str, str] | None = None,
                 declared: InputBounds = DECLARED_BOUNDS) -> None:
        """Raises CelCostError when the expression is over the limits for inputs within
        ``declared``."""
        self._tree = parse_for_cost(source)
        self._variables = None if variables is None else dict(variables)
        self._declared = declared
        estimated = estimate_tree(self._tree, self._variables, declared)
        #: The estimated cost for inputs within the declared bounds.
        self.estimated = estimated.cost
        problem = estimated.problem()
        if problem is not None:
            raise CelCostError(f"CEL expression too expensive: {problem}")
        #: Within the limits whatever the input size: no evaluation needs a check.
        self.fixed = estimate_tree(self._tree, self._variables, _UNBOUNDED).problem() is None
        self._seen: dict[InputBounds, str | None] = {}

    def check(self, values: Iterable[object]) -> str | None:
        """Why evaluating over these variable values would exceed the runtime budget, or None.

        Only inputs larger than the declared bounds are estimated again, with their sizes
        rounded up to four significant bits (one estimate serves many inputs).
        """
        if self.fixed:
            return None
        bounds = measure(values)
        if bounds.within(self._declared):
            return None
        rounded = InputBounds(*map(_round_up, (bounds.string, bounds.list, bounds.map)))
        if rounded in self._seen:
            return self._seen[rounded]
        problem = estimate_tree(self._tree, self._variables, rounded).problem("budget")
        message = None if problem is None else (
            f"CEL evaluation over budget, not evaluated: for this input "
            f"({rounded.beyond(self._declared)}) {problem}")
        if len(self._seen) >= 64:
            self._seen.clear()
        self._seen[rounded] = message
        return message


def _round_up(number: int) -> int:
    """``number`` rounded up to four significant bits (at most 12.5% more)."""
    shift = max(number.bit_length() - 4, 0)
    return -(-number >> shift) << shift
