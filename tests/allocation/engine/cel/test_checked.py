"""Retargeting calls in a serialized checked expression (allocation/engine/cel/_checked.py)."""

from __future__ import annotations

from allocation.engine.cel import _checked
from allocation.engine.cel._library import _device_env


def _serialized(source: str) -> bytes:
    return _device_env(True, None).compile(source).serialize()


def test_only_calls_resolved_to_one_named_overload_are_renamed() -> None:
    blob = _serialized("[1.0].sum() + double([1].sum()) == 2.0 + double(dyn([]).sum())")
    out = _checked.retarget(blob, {"list_double_sum_double": "sum@double"})
    assert out is not None and out.count(b"sum@double") == 1
    assert out.count(b"\x12\x03sum") == blob.count(b"\x12\x03sum") - 1
    assert _checked.retarget(blob, {"list_uint_sum_uint": "sum@uint"}) is None


def test_calls_inside_comprehensions_lists_and_maps_are_found() -> None:
    source = ("[[1u].sum()].all(x, x > 0u) && {'a': [2u].sum()}.a == 2u "
              "&& [3u].map(y, [y].sum()).size() == 1")
    out = _checked.retarget(_serialized(source), {"list_uint_sum_uint": "sum@uint"})
    assert out is not None and out.count(b"sum@uint") == 3
    # what the library reads back runs the renamed function
    env = _device_env(True, None)
    assert env.deserialize(out).eval(data={}).plain_value() is True


def test_a_field_of_the_same_name_is_left_alone() -> None:
    source = '{"sum": [1.0]}.sum.sum() == 1.0'
    out = _checked.retarget(_serialized(source), {"list_double_sum_double": "sum@double"})
    assert out is not None and out.count(b"sum@double") == 1
    assert _device_env(True, None).deserialize(out).eval(data={}).plain_value() is True
