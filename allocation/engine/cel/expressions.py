"""General CEL expressions over named variables (numeric-parameter templates, request counts)."""

from __future__ import annotations

from collections.abc import Mapping

import semver

from allocation.engine.attributes import QUANTITY_TAG, VERSION_TAG
from allocation.engine.cel._errors import CelEvaluationError
from allocation.engine.cel._library import Program, compile_program
from allocation.engine.cel._semantics import untag
from allocation.engine.cel.budget import Budget
from allocation.engine.cel.selectors import check_source
from allocation.engine.quantity import Quantity

__all__ = ["Expression", "compile_expression"]


class Expression:
    """A compiled expression; ``evaluate`` returns plain Python values."""

    __slots__ = ("source", "variables", "_program", "_budget")

    def __init__(self, source: str, variables: Mapping[str, str], program: Program,
                 budget: Budget) -> None:
        self.source = source
        self.variables = dict(variables)
        self._program = program
        self._budget = budget

    def evaluate(self, **values: object) -> object:
        """The value for these variable values (dict/list/int/str/bool/float/None; quantities and
        versions as canonical text); CelEvaluationError on any run-time error."""
        missing = sorted(set(self.variables) - set(values))
        if missing:
            raise CelEvaluationError("no value for variable " + ", ".join(missing))
        data = {name: _to_cel(value) for name, value in values.items()}
        over = self._budget.check(data.values())
        if over is not None:
            raise CelEvaluationError(over)
        ok, result = self._program.run(data)
        if not ok:
            raise CelEvaluationError(str(result))
        return untag(result)

    def __repr__(self) -> str:
        return f"Expression({self.source!r})"


def compile_expression(source: str, variables: Mapping[str, str]) -> Expression:
    """Compile ``source`` with ``variables`` (name -> "dyn", "string", "int", "map", ...).

    Raises:
        CelCompileError: it is too long or does not parse or type-check; CelCostError (a
            CelCompileError) when its estimated cost is over the limits.
    """
    check_source(source)
    program = compile_program(source, variables)
    return Expression(source, variables, program, Budget(source, variables))


def _to_cel(value: object) -> object:
    if isinstance(value, Quantity):
        return {QUANTITY_TAG: str(value)}
    if isinstance(value, semver.Version):
        return {VERSION_TAG: str(value)}
    if isinstance(value, Mapping):
        return {key: _to_cel(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_cel(item) for item in value]
    return value
