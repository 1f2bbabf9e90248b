"""Errors raised by the CEL layer, independent of the CEL library underneath."""

from __future__ import annotations

import re

__all__ = ["CelCompileError", "CelCostError", "CelEvaluationError", "compile_problem",
           "in_words"]


class CelCompileError(ValueError):
    """An expression that cannot be used: too long, bad syntax, type errors, wrong result type."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        self.message = message
        self.line = line
        self.column = column
        where = (f"line {line}, column {column}: " if line is not None and column is not None
                 else "compile error: ")
        super().__init__(f"{where}{message}")

    @classmethod
    def at(cls, message: str, source: str, offset: int) -> CelCompileError:
        """The error at character ``offset`` of ``source`` (line and column from 1)."""
        before = source[:offset]
        return cls(message, before.count("\n") + 1, offset - before.rfind("\n"))


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


# The parser's (ANTLR's) syntax messages list every token it would have accepted, which
# tells a person nothing; these patterns keep what went wrong and drop the token list.
_END = "<EOF>"
_WORDING = (
    (re.compile(r"^(?:extraneous|mismatched) input '(.*)' expecting .*$"), "unexpected {0}"),
    (re.compile(r"^missing '(.*)' at '(.*)'$"), "missing '{0}' before {1}"),
    (re.compile(r"^no viable alternative at input '(.*)'$"), "cannot read {0}"),
    (re.compile(r"^token recognition error at: '(.*)'$"), "unexpected character {0}"),
)


def _quoted(token: str) -> str:
    return "the end of the expression" if token == _END else f"'{token}'"


def in_words(message: str) -> str:
    """A CEL parser message in words: ``Syntax error: extraneous input '&&' expecting {'[',
    ...}`` becomes ``unexpected '&&'``; an early end is "the expression ends too early".

    Returns:
        the reworded message; a message that is not a known syntax error, unchanged.
    """
    text = message.removeprefix("Syntax error: ")
    if text == message:
        return message
    for pattern, words in _WORDING:
        match = pattern.match(text)
        if match:
            first, *rest = match.groups()
            if words.startswith("missing"):
                return words.format(first, *(_quoted(t) for t in rest))
            if words.startswith("unexpected") and first == _END:
                return "the expression ends too early"
            return words.format(_quoted(first))
    return f"syntax error: {text}"
