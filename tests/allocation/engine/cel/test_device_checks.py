"""Compile-time checks of v1 device selectors beyond the type check
(``cel/_device_checks.py``): here, upstream's unknown attribute type without list-type
attributes (dynamic-resource-allocation ``cel/compile.go`` v0.36.2: ``AnyType`` unless
DRAListTypeAttributes, ``DynType`` with it)."""

from __future__ import annotations

import pytest

from allocation.engine.cel import CelCompileError, compile_device_selector

_X = 'device.attributes["dra.example.com"].x'


@pytest.mark.parametrize("expression", [f"{_X}.exists(v, v == 1)", f"{_X}.all(v, v > 0)",
                                        f"{_X}.map(v, v).size() > 0"])
def test_a_comprehension_over_an_attribute_needs_list_type_attributes(expression):
    with pytest.raises(CelCompileError) as caught:
        compile_device_selector(expression)
    assert caught.value.message == (
        "expression of type 'google.protobuf.Any' cannot be the range of a comprehension "
        "(must be list, map, or dynamic)")
    assert (caught.value.line, caught.value.column) == (1, 37)  # the attribute's select
    compile_device_selector(expression, list_type_attributes=True)


def test_a_dyn_result_needs_list_type_attributes_an_attribute_result_does_not():
    with pytest.raises(CelCompileError, match="must evaluate to bool or the unknown type, "
                                              "not dyn"):
        compile_device_selector("dyn(true)")
    compile_device_selector("dyn(true)", list_type_attributes=True)
    for expression in (_X, f"[{_X}][0]", 'device.attributes["dra.example.com"]["x"]'):
        compile_device_selector(expression)  # the unknown type itself is a valid result


def test_comprehensions_over_maps_and_lists_are_unchanged():
    for expression in ('device.attributes["dra.example.com"].exists(k, k == "x")',
                       "[1, 2].all(v, v > 0)", f"{_X}.major() > 1",
                       f"{_X} == 1 ? true : false"):
        compile_device_selector(expression)
