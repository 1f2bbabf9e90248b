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


_INDEX = {"list_a_index_of_int", "list_a_last_index_of_int"}


def test_the_element_and_the_argument_are_unified_as_cel_go_does() -> None:
    assert _checked.mismatched_element(_serialized("[1].indexOf(2) == 0"), _INDEX) is None
    assert _checked.mismatched_element(_serialized("'ab'.indexOf('b') == 1"), _INDEX) is None
    offset, message = _checked.mismatched_element(
        _serialized("[1].indexOf(2) == 0 || [[1]].lastIndexOf([1.0]) == 0"), _INDEX)
    assert offset == 40 and message == ("found no matching overload for 'lastIndexOf' "
                                        "applied to 'list(list(int)).(list(double))'")


def test_optional_values_that_may_reach_python_are_found() -> None:
    names = {"list_hidden_min", "list_int_min_int"}
    assert _checked.may_pass_optional(_serialized("[1].min() == 1"), names) is None
    assert _checked.may_pass_optional(_serialized("dyn([optional.of(1)]).min() == 1"),
                                      names) == (25, "min")
