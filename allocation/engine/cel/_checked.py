"""Retargeting calls in a checked CEL expression, and checking their types, on its
protobuf wire form.

The CEL library's run time picks an implementation by the kinds of the arguments only, so
upstream overloads that differ by a list's element type (``list(uint).sum()`` against
``list(int).sum()``) share one, which cannot know which the checker chose: an empty
``list(double)`` would sum to int 0, not 0.0, and a uint list give an int (docs/cel.md
"Lists"). The checker's choice is in the checked expression (``cel.expr.CheckedExpr``,
its reference map: expression id -> overload ids), which the library can serialize and read
back: :func:`retarget` renames the function of each call the checker resolved to one of
the given overloads, so that the run time calls a function of that type alone.

:func:`mismatched_element` checks what the library's checker cannot: upstream's
``list(A).indexOf(A)`` (lists.go) has a type parameter, which the library can declare but
not implement, so the planner declares ``list(dyn), dyn``; the types the checker gave the
list and the argument (the checked expression's type map) are then compared as cel-go
unifies them (checker/types.go ``internalIsAssignable``).

Only the few fields on the way from the expression to its calls and types are decoded
(cel-spec ``checked.proto``/``syntax.proto`` field numbers); everything else is copied as
it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping

from allocation.engine.cel import _lists
from allocation.engine.cel._wire import (
    Field,
    Type,
    assignable,
    calls,
    checked_expression,
    expr_id,
    message_fields,
    rename_calls,
    type_text,
)

__all__ = ["review", "retarget", "mismatched_element", "may_pass_optional"]

def _resolved(checked: list[Field]) -> dict[int, list[str]]:
    """The reference map: expression id -> the overload ids its call resolved to."""
    references: dict[int, list[str]] = {}
    for number, _wire, entry in checked:
        if number == 2 and isinstance(entry, bytes):
            parts = {n: v for n, _w, v in message_fields(entry)}
            ids = [v.decode() for n, _w, v in message_fields(parts.get(2, b""))
                   if n == 3 and isinstance(v, bytes)]
            references[int(parts.get(1, 0))] = ids  # type: ignore[arg-type]
    return references


def retarget(serialized: bytes, functions: Mapping[str, str]) -> bytes | None:
    """``serialized`` (an ``Any`` holding a ``CheckedExpr``, as the library writes it) with
    every call the checker resolved to exactly one overload id of ``functions`` calling the
    function it maps to instead; None when there is no such call.
    """
    if not any(overload.encode() in serialized for overload in functions):
        return None
    checked = checked_expression(serialized).fields
    renames = {expr_id: functions[ids[0]] for expr_id, ids in _resolved(checked).items()
               if len(ids) == 1 and ids[0] in functions}
    return rename_calls(serialized, renames) if renames else None


def mismatched_element(serialized: bytes, overloads: Collection[str]
                       ) -> tuple[int, str] | None:
    """The first call (by position) the checker resolved to one of ``overloads`` (a member
    ``list(dyn), dyn``) whose argument cel-go would not unify with the list's element type:
    (offset of the call in the source, cel-go's message), or None.
    """
    if not any(overload.encode() in serialized for overload in overloads):
        return None
    try:
        return _mismatched(serialized, overloads)
    except (ValueError, IndexError, KeyError, TypeError, StopIteration, AttributeError):
        return None  # a form not foreseen here: leave the expression to the library's checker


def _typed_calls(serialized: bytes, overloads: Collection[str]
                 ) -> Iterator[tuple[int, str, list[str], Type, list[Type]]]:
    """(offset, function, overload ids, receiver type, argument types) of every member
    call the checker resolved to one or more of ``overloads``."""
    checked = checked_expression(serialized)
    references, types = _resolved(checked.fields), checked.types
    expr, positions = checked.expr, checked.positions
    for call, function, target, arguments in calls(expr):
        args = [expr_id(argument) for argument in arguments]
        ids = references.get(call, [])
        if target and any(overload in overloads for overload in ids):
            yield (positions.get(call, 0), function, ids, types.get(target, ("dyn",)),
                   [types.get(arg, ("dyn",)) for arg in args])


def _mismatched(serialized: bytes, overloads: Collection[str]) -> tuple[int, str] | None:
    found = []
    for offset, function, ids, listed, args in _typed_calls(serialized, overloads):
        if len(ids) != 1 or len(args) != 1:
            continue
        element = listed[1] if listed[0] == "list" else ("dyn",)
        if not assignable(element, args[0]):
            found.append((offset, f"found no matching overload for '{function}' "
                          f"applied to '{type_text(listed)}.({type_text(args[0])})'"))
    return min(found) if found else None


def _optional(kind: Type) -> bool:
    """Whether a value of this type may be or hold an optional value."""
    if kind[0] in ("dyn", "param") or kind[:2] == ("abstract", "optional_type"):
        return True
    return any(_optional(part) for part in kind[1:] if isinstance(part, tuple))


def may_pass_optional(serialized: bytes, overloads: Collection[str]) -> tuple[int, str] | None:
    """The first call (by position) to one of ``overloads`` whose list or argument may hold
    an optional value: (offset, function), or None. The library cannot hand an optional
    value inside a list to Python (it crashes the process), so such calls are refused; only
    worth asking when the expression makes optional values at all.
    """
    try:
        found = [(offset, function) for offset, function, _ids, listed, args
                 in _typed_calls(serialized, overloads)
                 if _optional(listed) or any(map(_optional, args))]
    except (ValueError, IndexError, KeyError, TypeError, StopIteration, AttributeError):
        return (0, "")  # not understood: refuse rather than risk the crash
    return min(found) if found else None


_TYPED_CALLS = re.compile(r"\b(sum|min|max)\b")
_INDEX_CALLS = re.compile(r"\b(indexOf|lastIndexOf)\b")
_LIST_CALLS = re.compile(r"\b(isSorted|sum|min|max|indexOf|lastIndexOf)\b")
_OPTIONALS = re.compile(r"\boptional\b|[.\[{,]\s*\?")  # optional.of(x), a.?b, [?x], {?k: v}
_INDEX_OVERLOADS = frozenset(overload.overload_id for overload in _lists.EXTENDING)
_LIST_OVERLOADS = frozenset(overload.overload_id
                            for overload in (*_lists.EXTENDING, *_lists.FUNCTIONS))


def review(source: str, serialize: Callable[[], bytes]
           ) -> tuple[bytes | None, tuple[int, str] | None]:
    """What the lists library needs of a checked expression (``serialize`` gives it), asked
    only when ``source`` names its functions (a word search): the expression with its typed
    calls retargeted (:func:`retarget`, None when unchanged), and a problem that makes it a
    compile error, (offset, message): an ``indexOf`` argument of another type than the
    list's elements (:func:`mismatched_element`), or a list that may hold optional values
    (:func:`may_pass_optional`; the library would crash handing one to Python)."""
    if not _LIST_CALLS.search(source):
        return None, None
    serialized = serialize()
    if _INDEX_CALLS.search(source):
        mismatch = mismatched_element(serialized, _INDEX_OVERLOADS)
        if mismatch is not None:
            return None, mismatch
    if _OPTIONALS.search(source):
        passed = may_pass_optional(serialized, _LIST_OVERLOADS)
        if passed is not None:
            return None, (passed[0], f"{passed[1] or 'a list function'}: lists that may hold "
                          "optional values are not supported")
    if not _TYPED_CALLS.search(source):
        return None, None
    try:
        return retarget(serialized, _lists.RETARGETED), None
    except (ValueError, IndexError, KeyError, TypeError, StopIteration, AttributeError):
        return None, None  # a form not foreseen here: the shared implementations run
