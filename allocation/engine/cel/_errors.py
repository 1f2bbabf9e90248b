"""Errors raised by the CEL layer, independent of the CEL library underneath."""

from __future__ import annotations

__all__ = ["CelCompileError", "CelEvaluationError"]


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
