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

__all__ = ["review", "retarget", "mismatched_element", "may_pass_optional"]

_Field = tuple[int, int, bytes | int]  # (field number, wire type, value)
# Expr fields holding Exprs, by the message they are in: Expr's own sub-messages (select 5,
# call 6, list 7, struct 8, comprehension 9) and, inside those, the fields that are Exprs.
_EXPR_KINDS = {5: (1,), 6: (1, 3), 7: (1,), 8: (2,), 9: (2, 4, 5, 6, 7)}
_STRUCT_ENTRY_EXPRS = (3, 4)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if byte < 0x80:
            return value, pos


def _put_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _fields(data: bytes) -> list[_Field]:
    fields, pos = [], 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            fields.append((number, wire, value))
        elif wire == 2:
            size, pos = _varint(data, pos)
            fields.append((number, wire, data[pos : pos + size]))
            pos += size
        else:  # fixed 64 (1) or 32 (5) bits
            width = 8 if wire == 1 else 4
            fields.append((number, wire, data[pos : pos + width]))
            pos += width
    return fields


def _encode(fields: list[_Field]) -> bytes:
    out = bytearray()
    for number, wire, value in fields:
        out += _put_varint(number << 3 | wire)
        if wire == 0:
            out += _put_varint(int(value))  # type: ignore[arg-type]
        elif wire == 2:
            out += _put_varint(len(value)) + value  # type: ignore[arg-type, operator]
        else:
            out += value  # type: ignore[operator]
    return bytes(out)


def _resolved(checked: list[_Field]) -> dict[int, list[str]]:
    """The reference map: expression id -> the overload ids its call resolved to."""
    references: dict[int, list[str]] = {}
    for number, _wire, entry in checked:
        if number == 2 and isinstance(entry, bytes):
            parts = {n: v for n, _w, v in _fields(entry)}
            ids = [v.decode() for n, _w, v in _fields(parts.get(2, b""))
                   if n == 3 and isinstance(v, bytes)]
            references[int(parts.get(1, 0))] = ids  # type: ignore[arg-type]
    return references


def _rewrite_expr(data: bytes, renames: Mapping[int, str]) -> bytes:
    fields = _fields(data)
    expr_id = next((int(v) for n, w, v in fields if n == 2 and w == 0), 0)  # type: ignore[arg-type]
    out = []
    for number, wire, value in fields:
        if number in _EXPR_KINDS and isinstance(value, bytes):
            inner = []
            for sub, sub_wire, sub_value in _fields(value):
                if number == 6 and sub == 2 and expr_id in renames:
                    sub_value = renames[expr_id].encode()
                elif sub in _EXPR_KINDS[number] and isinstance(sub_value, bytes):
                    sub_value = (_rewrite_entry(sub_value, renames) if number == 8
                                 else _rewrite_expr(sub_value, renames))
                inner.append((sub, sub_wire, sub_value))
            value = _encode(inner)
        out.append((number, wire, value))
    return _encode(out)


def _rewrite_entry(data: bytes, renames: Mapping[int, str]) -> bytes:
    return _encode([(n, w, _rewrite_expr(v, renames) if n in _STRUCT_ENTRY_EXPRS
                     and isinstance(v, bytes) else v) for n, w, v in _fields(data)])


def retarget(serialized: bytes, functions: Mapping[str, str]) -> bytes | None:
    """``serialized`` (an ``Any`` holding a ``CheckedExpr``, as the library writes it) with
    every call the checker resolved to exactly one overload id of ``functions`` calling the
    function it maps to instead; None when there is no such call.
    """
    if not any(overload.encode() in serialized for overload in functions):
        return None
    envelope = _fields(serialized)
    checked_at = next(i for i, (n, _w, _v) in enumerate(envelope) if n == 2)
    checked = _fields(envelope[checked_at][2])  # type: ignore[arg-type]
    renames = {expr_id: functions[ids[0]] for expr_id, ids in _resolved(checked).items()
               if len(ids) == 1 and ids[0] in functions}
    if not renames:
        return None
    checked = [(n, w, _rewrite_expr(v, renames) if n == 4 and isinstance(v, bytes) else v)
               for n, w, v in checked]
    envelope[checked_at] = (2, 2, _encode(checked))
    return _encode(envelope)


# Types, from cel.expr.Type: ("dyn",), ("null",), ("prim", name), ("wrapper", name),
# ("named", name) for well-known and message types, ("list", t), ("map", k, v),
# ("type", t), ("abstract", name, params...), ("param",).
_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "any", 2: "timestamp", 3: "duration"}
_Type = tuple


def _type(data: bytes) -> _Type:
    number, _wire, value = _fields(data)[0]
    if number in (1, 12):  # dyn, error
        return ("dyn",)
    if number == 2:
        return ("null",)
    if number in (3, 4):
        return ("prim" if number == 3 else "wrapper", _PRIMITIVES.get(int(value), "?"))  # type: ignore[arg-type]
    if number == 5:
        name = _WELL_KNOWN.get(int(value), "?")  # type: ignore[arg-type]
        return ("dyn",) if name == "any" else ("named", name)
    if number == 11:
        return ("type", _type(value) if value else ("param",))  # type: ignore[arg-type]
    if number in (6, 7):
        params = tuple(_type(v) for _n, _w, v in _fields(value))  # type: ignore[arg-type]
        return ("list" if number == 6 else "map", *params)
    if number == 9:
        return ("named", value.decode())  # type: ignore[union-attr]
    if number == 14:
        parts = _fields(value)  # type: ignore[arg-type]
        name = next(v.decode() for n, _w, v in parts if n == 1)  # type: ignore[union-attr]
        return ("abstract", name, *(_type(v) for n, _w, v in parts if n == 2))  # type: ignore[arg-type]
    return ("param",)  # 10, a type parameter (and a function type, never an argument)


def _assignable(left: _Type, right: _Type) -> bool:
    """cel-go's ``internalIsAssignable`` for the types a list element and the argument of
    ``indexOf`` can have; type parameters (an empty list's) take anything."""
    if "dyn" in (left[0], right[0]) or "param" in (left[0], right[0]):
        return True
    if left[0] == "null" or right[0] == "null":
        other = right if left[0] == "null" else left
        return other[0] in ("null", "wrapper", "abstract") or (
            other[0] == "named" and other[1] != "any")
    if "wrapper" in (left[0], right[0]):
        return left[1] == right[1]
    if left[0] == "type":
        return right[0] == "type"
    return left[0] == right[0] and len(left) == len(right) and all(
        _assignable(a, b) if isinstance(a, tuple) else a == b
        for a, b in zip(left[1:], right[1:], strict=True))


def _name(kind: _Type) -> str:
    """cel-go's text of a type (a type parameter reads dyn)."""
    if kind[0] in ("prim", "named"):
        return kind[1]
    if kind[0] in ("dyn", "param", "null"):
        return "dyn" if kind[0] != "null" else "null"
    if kind[0] == "wrapper":
        return f"wrapper({kind[1]})"
    head, params = (kind[1], kind[2:]) if kind[0] == "abstract" else (kind[0], kind[1:])
    return f"{head}({', '.join(_name(p) for p in params)})" if params else head


def _calls(data: bytes) -> Iterator[tuple[int, str, int, list[int]]]:
    """(id, function, target id or 0, argument ids) of every call in an Expr."""
    fields = _fields(data)
    expr_id = next((int(v) for n, w, v in fields if n == 2 and w == 0), 0)  # type: ignore[arg-type]
    for number, _wire, value in fields:
        if number not in _EXPR_KINDS or not isinstance(value, bytes):
            continue
        inner = _fields(value)
        if number == 6:
            function = next((v.decode() for n, _w, v in inner if n == 2), "")  # type: ignore[union-attr]
            target = next((_id(v) for n, _w, v in inner if n == 1), 0)  # type: ignore[arg-type]
            yield expr_id, function, target, [_id(v) for n, _w, v in inner if n == 3]  # type: ignore[arg-type]
        for sub, _sub_wire, sub_value in inner:
            if sub in _EXPR_KINDS[number] and isinstance(sub_value, bytes):
                if number == 8:
                    for n, _w, v in _fields(sub_value):
                        if n in _STRUCT_ENTRY_EXPRS and isinstance(v, bytes):
                            yield from _calls(v)
                else:
                    yield from _calls(sub_value)


def _id(data: bytes) -> int:
    return next((int(v) for n, w, v in _fields(data) if n == 2 and w == 0), 0)  # type: ignore[arg-type]


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
                 ) -> Iterator[tuple[int, str, list[str], _Type, list[_Type]]]:
    """(offset, function, overload ids, receiver type, argument types) of every member
    call the checker resolved to one or more of ``overloads``."""
    envelope = _fields(serialized)
    checked = _fields(next(v for n, _w, v in envelope if n == 2))  # type: ignore[arg-type]
    references = _resolved(checked)
    types: dict[int, _Type] = {}
    positions: dict[int, int] = {}
    for number, _wire, value in checked:
        if number == 3 and isinstance(value, bytes):
            entry = {n: v for n, _w, v in _fields(value)}
            types[int(entry.get(1, 0))] = _type(entry.get(2, b""))  # type: ignore[arg-type]
        if number == 5 and isinstance(value, bytes):
            for n, _w, v in _fields(value):
                if n == 4 and isinstance(v, bytes):
                    entry = {k: x for k, _w2, x in _fields(v)}
                    positions[int(entry.get(1, 0))] = int(entry.get(2, 0))  # type: ignore[arg-type]
    expr = next(v for n, _w, v in checked if n == 4)
    for call, function, target, args in _calls(expr):  # type: ignore[arg-type]
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
        if not _assignable(element, args[0]):
            found.append((offset, f"found no matching overload for '{function}' "
                          f"applied to '{_name(listed)}.({_name(args[0])})'"))
    return min(found) if found else None


def _optional(kind: _Type) -> bool:
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
