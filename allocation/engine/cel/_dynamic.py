"""Upstream's run-time errors of ``==`` and ``in`` on a dynamic value that holds an opaque one.

Kubernetes' opaque CEL types (Quantity, Semver, URL, NamedFormat, IP, CIDR) are Go values
whose ``Equal`` refuses another type: ``device.attributes["d"].driverVersion == "1.2.3"``
on a version attribute is the error "no such overload" upstream (cel-go calls the left
operand's ``Equal``; ``"1.2.3" == ...version`` is false, as is ``!=``, and ``== null``). Here
the opaque values are protobuf messages, which the library's equality finds unequal to a
string: false. And ``x in ["a", "b"]`` against a list of constants is a hash lookup
upstream (cel-go ``interpreter/decorators.go`` ``maybeOptimizeSetMembership``): a value Go
cannot hash, a Semver, a NamedFormat or bytes, panics, which cel-go reports as "internal
error: runtime error: hash of unhashable type cel.Semver"; here it is false.

Both can only happen to a left operand the checker types ``dyn`` (an attribute, ``dyn(x)``,
an element of a ``list(dyn)``) or, for ``==``, to an opaque one against a ``dyn`` right
operand: :func:`retarget` points those calls (``in`` only against a list of primitive
constants) at
:data:`FUNCTIONS`, which do what upstream does. Not when the expression may make optional
values: the library cannot hand one to Python (it crashes the process), and a ``dyn`` may
hold one then.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

from allocation.engine.cel import _format, _k8s, _lists
from allocation.engine.cel._k8s import Overload
from allocation.engine.cel._opaque import OPAQUE_KINDS, OPAQUE_NAMES
from allocation.engine.cel._wire import (
    calls,
    checked_expression,
    expr_id,
    message_fields,
    rename_calls,
)

__all__ = ["FUNCTIONS", "MAY_PANIC", "retarget", "dynamic_equal", "constant_membership",
           "take_panic"]

_EQUAL, _IN = "eq@dyn", "in@dyn"
_OPAQUE = frozenset(OPAQUE_NAMES.values())
#: In a retargeted expression that calls the set lookup, which may panic (:func:`take_panic`).
MAY_PANIC = _IN.encode()
# Go's names of the types that cannot be hashed (their structs hold slices or maps)
_UNHASHABLE = {_k8s.SEMVER: "cel.Semver", _format.FORMAT: "cel.Format"}
_COMPARISONS = re.compile(r"==|\bin\b")
# optional values: optional.of(x), a.?b, [?x], {?k: v}, and lists' first() and last()
_OPTIONALS = re.compile(r"\boptional\b|[.\[{,]\s*\?|\b(first|last)\s*\(")
# Constant kinds (cel-spec syntax.proto Constant): bool 2, int64 3, uint64 4, double 5,
# string 6 are cel-go's primitive types a constant list may hash (not bytes 7, not null 1)
_HASHED_CONSTANTS = frozenset({2, 3, 4, 5, 6})


def dynamic_equal(left: object, right: object) -> bool:
    """``left == right`` as cel-go's ``left.Equal(right)``.

    Raises:
        ValueError: "no such overload" for an opaque ``left`` and a ``right`` of another
            type but null.
    """
    if type(left) in OPAQUE_KINDS and type(right) is not type(left) and right is not None:
        raise ValueError("no such overload")
    return _lists.cel_equal(left, right)


def constant_membership(left: object, items: list[object]) -> bool:
    """``left in items`` for a list of primitive constants, as cel-go's set lookup.

    Raises:
        ValueError: cel-go's recovered panic for a ``left`` Go cannot hash. A Go panic
            ends the whole evaluation (no ``||`` or ``&&`` absorbs it), so it is also kept
            for :func:`take_panic`.
    """
    kind = OPAQUE_KINDS.get(type(left))
    if kind in _UNHASHABLE or isinstance(left, (bytes, bytearray)):
        name = _UNHASHABLE.get(kind, "types.Bytes")  # type: ignore[arg-type]
        message = f"internal error: runtime error: hash of unhashable type {name}"
        _PANIC.message = message
        raise ValueError(message)
    return any(_lists.cel_equal(left, item) for item in items)


_PANIC = threading.local()


def take_panic() -> str | None:
    """The message of the panic the evaluation just ended in this thread, if any (and
    forget it): the caller's result is that error, whatever the library made of it."""
    message = getattr(_PANIC, "message", None)
    if message is not None:
        _PANIC.message = None
    return message


#: The functions the retargeted calls call (``list(dyn)`` and ``dyn`` take any argument).
FUNCTIONS: tuple[Overload, ...] = (
    Overload(_EQUAL, "eq_dyn_dyn@", ("dyn", "dyn"), "bool", False, dynamic_equal),
    Overload(_IN, "in_dyn_list@", ("dyn", "list:dyn"), "bool", False, constant_membership),
)


def retarget(source: str, serialize: Callable[[], bytes]) -> bytes | None:
    """The checked expression (``serialize`` gives it) with its ``==`` and constant-list
    ``in`` calls on a ``dyn`` left operand calling :data:`FUNCTIONS`; None when it has none,
    when ``source`` makes no comparison, or when it may make optional values.
    """
    if not _COMPARISONS.search(source) or _OPTIONALS.search(source):
        return None
    try:
        serialized = serialize()
        checked = checked_expression(serialized)
        renames = {}
        for call, function, target, args in calls(checked.expr):
            if target or len(args) != 2:
                continue
            left = checked.types.get(expr_id(args[0]), ("dyn",))
            right = checked.types.get(expr_id(args[1]), ("dyn",))
            if function == "_==_" and (left == ("dyn",) or (
                    left[0] == "named" and left[1] in _OPAQUE and right == ("dyn",))):
                renames[call] = _EQUAL
            elif function == "@in" and left == ("dyn",) and _hashed_constants(args[1]):
                renames[call] = _IN
        return rename_calls(serialized, renames) if renames else None
    except (ValueError, IndexError, KeyError, TypeError, StopIteration, AttributeError):
        return None  # a form not foreseen here: the library's own equality runs


def _hashed_constants(data: bytes) -> bool:
    """Whether an Expr is a non-empty list literal of constants cel-go hashes."""
    listed = next((v for n, _w, v in message_fields(data) if n == 7), None)
    if not isinstance(listed, bytes):
        return False
    elements = [v for n, _w, v in message_fields(listed) if n == 1]
    if not elements or any(n == 2 for n, _w, _v in message_fields(listed)):  # optional index
        return False
    for element in elements:
        constant = next((v for n, _w, v in message_fields(element) if n == 3), None)  # type: ignore[arg-type]
        if not isinstance(constant, bytes) or not constant:
            return False
        if message_fields(constant)[0][0] not in _HASHED_CONSTANTS:
            return False
    return True
