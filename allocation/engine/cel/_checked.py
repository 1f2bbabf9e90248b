"""Retargeting calls in a checked CEL expression, on its protobuf wire form.

The CEL library's run time picks an implementation by the kinds of the arguments only, so
upstream overloads that differ by a list's element type (``list(uint).sum()`` against
``list(int).sum()``) share one, which cannot know which the checker chose: an empty
``list(double)`` would sum to int 0, not 0.0, and a uint list give an int (docs/cel.md
"Lists"). The checker's choice is in the checked expression (``cel.expr.CheckedExpr``,
its reference map: expression id -> overload ids), which the library can serialize and read
back: :func:`retarget` renames the function of each call the checker resolved to one of
the given overloads, so that the run time calls a function of that type alone.

Only the few fields on the way from the expression to its calls are decoded (cel-spec
``checked.proto``/``syntax.proto`` field numbers); everything else is copied as it is.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["retarget"]

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
