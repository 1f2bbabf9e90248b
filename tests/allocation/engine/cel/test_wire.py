"""The wire form of checked expressions (allocation/engine/cel/_wire.py)."""

from __future__ import annotations

from allocation.engine.cel import _wire
from allocation.engine.cel._library import _device_env


def _type_map(source: str) -> dict[int, _wire.Type]:
    envelope = _wire.message_fields(_device_env(True, None).compile(source).serialize())
    checked = _wire.message_fields(next(v for n, _w, v in envelope if n == 2))
    types = {}
    for number, _w, value in checked:
        if number == 3:
            entry = {n: v for n, _w2, v in _wire.message_fields(value)}
            types[entry[1]] = _wire.decode_type(entry[2])
    return types


def test_fields_and_encode_are_inverse() -> None:
    blob = _device_env(True, None).compile('[1, 2u].size() == 2 && "a" in {"a": 1.5}').serialize()
    assert _wire.encode(_wire.message_fields(blob)) == blob


def test_types_of_the_type_map_read_as_cel_go_names_them() -> None:
    texts = {_wire.type_text(kind) for kind in _type_map(
        '{"a": [1u]}.size() == 1 && device.capacity["d"].x == quantity("1") '
        '&& duration("1s") > duration("0s")').values()}
    assert {"map(string, list(uint))", "list(uint)", "uint", "bool", "int", "string",
            "kubernetes.Quantity", "duration"} <= texts


def test_assignable_takes_dyn_and_null_as_cel_go() -> None:
    assert _wire.assignable(("prim", "int"), ("dyn",))
    assert _wire.assignable(("null",), ("named", "duration"))
    assert not _wire.assignable(("null",), ("prim", "int"))
    assert not _wire.assignable(("list", ("prim", "int")), ("list", ("prim", "string")))


def test_packed_varints_read_multi_byte_values() -> None:
    assert _wire.packed_varints(bytes([0x01, 0xAC, 0x02, 0x00])) == [1, 300, 0]
