"""The protobuf wire form of a checked CEL expression, and cel-go's view of its types.

The CEL library serializes a checked expression (``cel.expr.CheckedExpr`` in an ``Any``)
and reads one back; the planner reads a few of its fields to check what the library's
checker does not (``_checked``: the lists library's typed calls; ``_literals``: upstream's
homogeneous aggregate literals). Only the wire format is decoded here (cel-spec
``checked.proto``/``syntax.proto``): fields as (number, wire type, value) triples, and the
types of the type map as small tuples compared and printed as cel-go does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import NamedTuple

__all__ = ["Field", "Type", "Checked", "EXPR_KINDS", "STRUCT_ENTRY_EXPRS", "message_fields",
           "encode", "packed_varints", "expr_id", "calls", "rename_calls",
           "checked_expression", "decode_type", "type_text", "assignable"]

Field = tuple[int, int, bytes | int]  # (field number, wire type, value)


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


def packed_varints(data: bytes) -> list[int]:
    """The values of a packed repeated integer field."""
    values, pos = [], 0
    while pos < len(data):
        value, pos = _varint(data, pos)
        values.append(value)
    return values


def message_fields(data: bytes) -> list[Field]:
    """The fields of one protobuf message, in order (a repeated field once per value)."""
    found, pos = [], 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            found.append((number, wire, value))
        elif wire == 2:
            size, pos = _varint(data, pos)
            found.append((number, wire, data[pos : pos + size]))
            pos += size
        else:  # fixed 64 (1) or 32 (5) bits
            width = 8 if wire == 1 else 4
            found.append((number, wire, data[pos : pos + width]))
            pos += width
    return found


def encode(fields: list[Field]) -> bytes:
    """The wire form of ``fields`` (the inverse of :func:`fields`)."""
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


# Expr fields holding Exprs, by the message they are in: Expr's own sub-messages (select 5,
# call 6, list 7, struct 8, comprehension 9) and, inside those, the fields that are Exprs.
EXPR_KINDS = {5: (1,), 6: (1, 3), 7: (1,), 8: (2,), 9: (2, 4, 5, 6, 7)}
STRUCT_ENTRY_EXPRS = (3, 4)


def calls(data: bytes) -> Iterator[tuple[int, str, int, list[bytes]]]:
    """(id, function, target id or 0, the argument Exprs) of every call in an Expr, outer
    calls first."""
    fields = message_fields(data)
    own_id = expr_id(data)
    for number, _wire, value in fields:
        if number not in EXPR_KINDS or not isinstance(value, bytes):
            continue
        inner = message_fields(value)
        if number == 6:
            function = next((v.decode() for n, _w, v in inner if n == 2), "")  # type: ignore[union-attr]
            target = next((expr_id(v) for n, _w, v in inner if n == 1), 0)  # type: ignore[arg-type]
            yield own_id, function, target, [v for n, _w, v in inner if n == 3]  # type: ignore[misc]
        for sub, _sub_wire, sub_value in inner:
            if sub in EXPR_KINDS[number] and isinstance(sub_value, bytes):
                if number == 8:
                    for n, _w, v in message_fields(sub_value):
                        if n in STRUCT_ENTRY_EXPRS and isinstance(v, bytes):
                            yield from calls(v)
                else:
                    yield from calls(sub_value)


def expr_id(data: bytes) -> int:
    """The id of an Expr."""
    return next((int(v) for n, w, v in message_fields(data) if n == 2 and w == 0), 0)  # type: ignore[arg-type]


def rename_calls(serialized: bytes, renames: Mapping[int, str]) -> bytes:
    """``serialized`` (an ``Any`` holding a ``CheckedExpr``) with the call of each expression
    id in ``renames`` calling the function it maps to (the library's run time then calls
    that function's implementation; its checker is not asked again).

    Returns:
        The new serialized expression.
    """
    envelope = message_fields(serialized)
    checked_at = next(i for i, (n, _w, _v) in enumerate(envelope) if n == 2)
    checked = message_fields(envelope[checked_at][2])  # type: ignore[arg-type]
    checked = [(n, w, _rewrite_expr(v, renames) if n == 4 and isinstance(v, bytes) else v)
               for n, w, v in checked]
    envelope[checked_at] = (2, 2, encode(checked))
    return encode(envelope)


def _rewrite_expr(data: bytes, renames: Mapping[int, str]) -> bytes:
    fields = message_fields(data)
    own_id = expr_id(data)
    out = []
    for number, wire, value in fields:
        if number in EXPR_KINDS and isinstance(value, bytes):
            inner = []
            for sub, sub_wire, sub_value in message_fields(value):
                if number == 6 and sub == 2 and own_id in renames:
                    sub_value = renames[own_id].encode()
                elif sub in EXPR_KINDS[number] and isinstance(sub_value, bytes):
                    sub_value = (_rewrite_entry(sub_value, renames) if number == 8
                                 else _rewrite_expr(sub_value, renames))
                inner.append((sub, sub_wire, sub_value))
            value = encode(inner)
        out.append((number, wire, value))
    return encode(out)


def _rewrite_entry(data: bytes, renames: Mapping[int, str]) -> bytes:
    return encode([(n, w, _rewrite_expr(v, renames) if n in STRUCT_ENTRY_EXPRS
                     and isinstance(v, bytes) else v) for n, w, v in message_fields(data)])


class Checked(NamedTuple):
    """What a checked expression holds, decoded."""

    fields: list[Field]  # the CheckedExpr's own fields (reference map 2, type map 3, ...)
    expr: bytes  # the Expr (field 4)
    types: dict[int, Type]  # expression id -> its type (the type map)
    positions: dict[int, int]  # expression id -> offset in the source (source info)


def checked_expression(serialized: bytes) -> Checked:
    """The ``CheckedExpr`` in ``serialized`` (an ``Any``, as the library writes it).

    Raises:
        StopIteration, ValueError, IndexError: ``serialized`` is not one.
    """
    envelope = message_fields(serialized)
    checked = message_fields(next(v for n, _w, v in envelope if n == 2))  # type: ignore[arg-type]
    types: dict[int, Type] = {}
    positions: dict[int, int] = {}
    for number, _wire, value in checked:
        if number == 3 and isinstance(value, bytes):  # type_map entry
            entry = {n: v for n, _w, v in message_fields(value)}
            types[int(entry.get(1, 0))] = decode_type(entry.get(2, b""))  # type: ignore[arg-type]
        elif number == 5 and isinstance(value, bytes):  # source_info, its positions map
            for n, _w, v in message_fields(value):
                if n == 4 and isinstance(v, bytes):
                    entry = {k: x for k, _w2, x in message_fields(v)}
                    positions[int(entry.get(1, 0))] = int(entry.get(2, 0))  # type: ignore[arg-type]
    expr = next(v for n, _w, v in checked if n == 4)
    return Checked(checked, expr, types, positions)  # type: ignore[arg-type]


# Types, from cel.expr.Type: ("dyn",), ("null",), ("prim", name), ("wrapper", name),
# ("named", name) for well-known and message types, ("list", t), ("map", k, v),
# ("type", t), ("abstract", name, params...), ("param",).
_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "any", 2: "timestamp", 3: "duration"}
Type = tuple


def decode_type(data: bytes) -> Type:
    """A ``cel.expr.Type`` message as a tuple (see :data:`Type`)."""
    number, _wire, value = message_fields(data)[0]
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
        return ("type", decode_type(value) if value else ("param",))  # type: ignore[arg-type]
    if number in (6, 7):
        params = tuple(decode_type(v) for _n, _w, v in message_fields(value))  # type: ignore[arg-type]
        return ("list" if number == 6 else "map", *params)
    if number == 9:
        return ("named", value.decode())  # type: ignore[union-attr]
    if number == 14:
        parts = message_fields(value)  # type: ignore[arg-type]
        name = next(v.decode() for n, _w, v in parts if n == 1)  # type: ignore[union-attr]
        return ("abstract", name, *(decode_type(v) for n, _w, v in parts if n == 2))  # type: ignore[arg-type]
    return ("param",)  # 10, a type parameter (and a function type, never an argument)


def assignable(left: Type, right: Type) -> bool:
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
        assignable(a, b) if isinstance(a, tuple) else a == b
        for a, b in zip(left[1:], right[1:], strict=True))


def type_text(kind: Type) -> str:
    """cel-go's text of a type (its ``FormatCheckedType``/``FormatCELType``): a type
    parameter, and a free one (``_literals``), reads dyn; ``any`` (``_literals``) reads any;
    a type of a type not known reads ``type``."""
    tag = kind[0]
    if tag in ("prim", "named"):
        return kind[1]
    if tag in ("null", "any"):
        return tag
    if tag in ("dyn", "param", "free"):
        return "dyn"
    if tag == "wrapper":
        return f"wrapper({kind[1]})"
    if tag == "type" and (len(kind) < 2 or kind[1][0] == "param"):
        return "type"
    head, params = (kind[1], kind[2:]) if tag == "abstract" else (tag, kind[1:])
    return f"{head}({', '.join(type_text(p) for p in params)})" if params else head
