"""Errors raised by the CEL layer, independent of the CEL library underneath."""

from __future__ import annotations

__all__ = ["CelCompileError", "CelCostError", "CelEvaluationError", "compile_problem"]


class CelCompileError(ValueError):
    """An expression that cannot be used: too long, bad syntax, type errors, wrong result type."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        self.message = message
        self.line = line
        self.column = column
        where = f" at {line}:{column}" if line is not None and column is not None else ""
        super().__init__(f"compile error{where}: {message}")


class CelEvaluationError(Exception):
    """An expression that failed at run time (missing key, type mismatch, budget overrun)."""


class CelCostError(CelCompileError):
    """An expression whose estimated cost or value size is over the limits (``cost``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.args = (message,)

    def __str__(self) -> str:
        return self.message


def compile_problem(error: CelCompileError, what: str) -> str:
    """The one-line problem for a field whose CEL ``what`` (e.g. "selector") does not compile:
    a cost refusal speaks for itself, anything else is ``invalid CEL <what>: <error>``."""
    if isinstance(error, CelCostError):
        return str(error)
    return f"invalid CEL {what}: {error}"
