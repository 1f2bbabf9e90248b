"""``includes`` and list-type attributes in device selectors (``cel/_includes.py``, gate
DRAListTypeAttributes), against the cases of upstream's ``cel/compile_test.go`` v0.36.2
(``includes-function-*``: the match and the estimated cost)."""

from __future__ import annotations

import pytest

from allocation.engine.cel import CelCompileError, CelEvaluationError, compile_device_selector

DRIVER = "dra.example.com"
_NAME = f'device.attributes["{DRIVER}"].name'


def _matches(expression: str, attribute: dict) -> bool:
    selector = compile_device_selector(expression, list_type_attributes=True)
    return selector.matches(DRIVER, {"name": "d", "attributes": {"name": attribute}})


@pytest.mark.parametrize(("argument", "attribute", "expected"), [
    ("true", {"bool": True}, True), ("true", {"bool": False}, False),
    ("true", {"bools": [True, False]}, True), ("false", {"bools": [True, True]}, False),
    ("1", {"int": 1}, True), ("1", {"int": 2}, False),
    ("1", {"ints": [1, 2]}, True), ("3", {"ints": [1, 2]}, False),
    ('"fish"', {"string": "fish"}, True), ('"bird"', {"string": "fish"}, False),
    ('"fish"', {"strings": ["fish", "bird"]}, True), ('"cat"', {"strings": ["fish"]}, False),
    ('semver("1.0.0")', {"version": "1.0.0"}, True),
    ('semver("2.0.0")', {"version": "1.0.0"}, False),
    ('semver("1.0.0")', {"versions": ["1.0.0", "2.0.0"]}, True),
    ('semver("3.0.0")', {"versions": ["1.0.0", "2.0.0"]}, False),
    # cel-go's Equal: numbers across types; a Semver equals no string, without an error
    ("1.0", {"ints": [1]}, True), ('"1.0.0"', {"versions": ["1.0.0"]}, False),
    ("1", {"bools": [True]}, False),
])
def test_includes_on_scalars_and_lists(argument, attribute, expected):
    assert _matches(f"{_NAME}.includes({argument})", attribute) is expected


def test_estimated_cost_is_the_longest_list_as_upstream():
    assert compile_device_selector(f"{_NAME}.includes(true)",
                                   list_type_attributes=True).estimated_cost == 4 + 48
    assert compile_device_selector(f'{_NAME}.includes(semver("1.0.0"))',
                                   list_type_attributes=True).estimated_cost == 4 + 48 + 1


def test_includes_exists_only_with_the_gate():
    with pytest.raises(CelCompileError, match="undeclared reference to 'includes'"):
        compile_device_selector(f"{_NAME}.includes(true)")


def test_a_list_longer_than_48_values_is_a_runtime_error_unless_found_early():
    with pytest.raises(CelEvaluationError, match="cannot be applied to lists longer than 48"):
        _matches(f"{_NAME}.includes(99)", {"ints": list(range(60))})
    assert _matches(f"{_NAME}.includes(47)", {"ints": list(range(60))})


def test_list_attributes_are_lists_to_the_other_functions():
    assert _matches(f"{_NAME}.exists(v, v > 1)", {"ints": [0, 2]})
    assert not _matches(f"{_NAME}.all(v, v > 1)", {"ints": [0, 2]})
    assert _matches(f"size({_NAME}) == 2 && 2 in {_NAME}", {"ints": [0, 2]})
    assert _matches(f'{_NAME}[1].isGreaterThan(semver("1.0.0"))',
                    {"versions": ["1.0.0", "1.2.0"]})
    assert not _matches(f"{_NAME} == 0", {"ints": [0]})  # a list is not its item
