"""The CEL library's messages in cel-go's words, independent of the library's objects.

The allocator explains a selector's failure with the text upstream's would give (cel-go
v0.26 through k8s.io/dynamic-resource-allocation v0.34-v0.36, docs/cel.md): the library
(cel-expr-python) words its compile and run-time errors its own way, with status codes
and positions in its own format. These functions take its text and give the planner's
(:class:`CelCompileError` with line and column) or cel-go's wording.
"""

from __future__ import annotations

import re

from allocation.engine.cel._errors import CelCompileError, in_words

__all__ = ["clean", "library_compile_error", "go_message"]

_ERROR_AT = re.compile(r"ERROR: <input>:(\d+):(\d+): ([^\n]*)")
_STATUS = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = re.compile(r" \[[A-Z_]+\]$")


def library_compile_error(text: str, calls_in: str | None = None) -> CelCompileError:
    """The first error of the library's ``text``; with ``calls_in`` (the source), the first
    by position whose position is a call's ``(``, where cel-go reports an undeclared
    function, else the first by position."""
    found = [(int(m.group(1)), int(m.group(2)), m.group(3).strip())
             for m in _ERROR_AT.finditer(text)]
    if not found:
        return CelCompileError(clean(text.splitlines()[0] if text else "invalid expression"))
    line, column, message = found[0]
    if calls_in is not None:
        lines = calls_in.split("\n")
        found.sort(key=lambda error: error[:2])
        at_call = [e for e in found if e[0] <= len(lines) and
                   lines[e[0] - 1][e[1] - 1 : e[1]] == "("]
        line, column, message = (at_call or found)[0]
    return CelCompileError(in_words(message), line, column)


def clean(text: str) -> str:
    """The library's message without its status code (``INVALID_ARGUMENT: ... [x]``)."""
    return _STATUS_SUFFIX.sub("", _STATUS.sub("", text.strip()))


_NOT_FOUND = re.compile(r'^Key not found in map ?: ?"?(.*?)"?$')
_NO_OVERLOAD = re.compile(r"^No matching overloads found ?: ?(.*)$")
_INDEX = re.compile(r"^Index error: index=(-?\d+) size=\d+$")
_TYPES = r"(string|bytes|double|int|uint|bool)"
_CONVERT = re.compile(rf"^cannot convert {_TYPES} to {_TYPES}$")  # not the quantity's "value"
_SAME_TEXT = {"divide by zero": "division by zero"}


def go_message(text: str) -> str:
    """cel-go's wording for the library's common run-time errors, as upstream's allocator
    reports them (checked against cel-go v0.26 through k8s.io/dynamic-resource-allocation
    v0.34-v0.36)."""
    match = _NOT_FOUND.match(text)
    if match:
        return f"no such key: {match.group(1)}"
    match = _NO_OVERLOAD.match(text)
    if match:
        return _no_overload(match.group(1))
    match = _INDEX.match(text)
    if match:
        return f"index out of bounds: {match.group(1)}"
    match = _CONVERT.match(text)
    if match:
        return f"type conversion error from '{match.group(1)}' to '{match.group(2)}'"
    return _SAME_TEXT.get(text, text)


def _no_overload(call: str) -> str:
    """cel-go names no function for an operator or a standard member function on dyn
    values (``no such overload``), except ``size`` and operators with an opaque operand
    (``no such overload: _>_``); the library names the argument types."""
    name = call.split("(", 1)[0] if not call.startswith("(") else call.split(".", 1)[1]
    name = name.split("(", 1)[0]
    if name == "size" or "struct" in call:
        return f"no such overload: {name}"
    return "no such overload"
