"""Upstream's homogeneous aggregate literals in v1 selectors (allocation/engine/cel/_literals.py).

Every case was compared with Kubernetes' own CEL environment (k8s.io/dynamic-resource-allocation
``cel``, v0.36.2, through the celhar harness of docs/cel.md): the same outcome, and for a
refused one the same message and column.
"""

from __future__ import annotations

import pytest

from allocation.engine.cel import _literals
from allocation.engine.cel._library import _device_env
from tests.allocation.engine.cel.device_helpers import compile_error, matches

REFUSED = [
    ('size([1, "a"]) == 2', 10, "expected type 'int' but found 'string'"),
    ('size({"a": 1, "b": "x"}) == 2', 20, "expected type 'int' but found 'string'"),
    ('size({"a": 1, 2: 1}) == 2', 15, "expected type 'string' but found 'int'"),
    ('size({"a": 1, 2: "x"}) == 2', 15, "expected type 'string' but found 'int'"),
    ('size([1, 2u]) == 2', 10, "expected type 'int' but found 'uint'"),
    ('size([1, 1.5]) == 2', 10, "expected type 'int' but found 'double'"),
    ('size([1, dyn(2)]) == 2', 13, "expected type 'int' but found 'dyn'"),
    ('size([null, 1]) == 2', 13, "expected type 'null' but found 'int'"),
    ('size([[1], ["a"]]) == 2', 12, "expected type 'list(int)' but found 'list(string)'"),
    ('size([{"a": 1}, {"a": "b"}]) == 2',
     17, "expected type 'map(string, int)' but found 'map(string, string)'"),
    ('size([?optional.of("a"), 2]) == 2', 26, "expected type 'string' but found 'int'"),
    ('size({?"a": optional.of(1), "b": "x"}) == 2', 34, "expected type 'int' but found 'string'"),
    ('size([quantity("1Gi"), semver("1.2.3")]) == 2',
     30, "expected type 'kubernetes.Quantity' but found 'kubernetes.Semver'"),
    ('size([duration("1s"), timestamp("2020-01-01T00:00:00Z")]) == 2',
     32, "expected type 'duration' but found 'timestamp'"),
    ('size([null, duration("1s")]) == 2', 21, "expected type 'null' but found 'duration'"),
    ('size([device.attributes["gpu.example.com"].model, "a"]) == 2',
     51, "expected type 'any' but found 'string'"),
    ('size(["a", device.attributes["gpu.example.com"].model]) == 2',
     48, "expected type 'string' but found 'any'"),
    ('size([dyn(1), device.attributes["gpu.example.com"].cores]) == 2',
     51, "expected type 'dyn' but found 'any'"),
    ('size([device.attributes["gpu.example.com"], {"a": 1}]) == 2',
     45, "expected type 'map(string, any)' but found 'map(string, int)'"),
    ('size([device.attributes["gpu.example.com"].?model, optional.of(1)]) == 2',
     63, "expected type 'optional_type(any)' but found 'optional_type(int)'"),
    ('device.attributes["gpu.example.com"].cores in ["a", 108]',
     53, "expected type 'string' but found 'int'"),
    ('[1, 2].all(i, size([i, "a"]) > 0)', 24, "expected type 'int' but found 'string'"),
    ('cel.bind(v, [1, "x"], size(v) == 2)', 17, "expected type 'int' but found 'string'"),
    ('size({"a": [1], "b": [2u]}) == 2', 22, "expected type 'list(int)' but found 'list(uint)'"),
]

ACCEPTED = [
    'size([dyn(1), dyn("a")]) == 2',
    'size([[], [1]]) == 2',
    'size([{}, {"a": 1}]) == 2',
    'size([?optional.of(1), 2]) == 2',
    'size({?"a": optional.of(1), "b": 2}) == 2',
    'size([quantity("1Gi"), device.capacity["gpu.example.com"].memory]) == 2',
    'size([device.attributes["gpu.example.com"].model, '
    'device.attributes["gpu.example.com"].cores]) == 2',
    'size([device.attributes["gpu.example.com"], device.attributes[device.driver]]) == 2',
    'device.attributes["gpu.example.com"].model in ["A100", "H100"]',
    'device.attributes["gpu.example.com"].cores in [1, 108]',
    '[1, 2].exists(x, x == 2) && [[1, 2], [3]].all(l, size(l) > 0)',
    'size([has(device.attributes["gpu.example.com"].model), true]) == 2',
    'size([[optional.of(1)], [optional.none()]]) == 2',
]


@pytest.mark.parametrize(("expression", "column", "message"), REFUSED)
def test_a_mixed_literal_is_refused_where_upstream_refuses_it(expression: str, column: int,
                                                              message: str) -> None:
    error = compile_error(expression)
    assert (error.line, error.column, error.message) == (1, column, message)


@pytest.mark.parametrize("expression", ACCEPTED)
def test_a_literal_of_one_type_compiles(expression: str) -> None:
    device = {"attributes": {"model": {"string": "A100"}, "cores": {"int": 108}},
              "capacity": {"memory": {"value": "80Gi"}}}
    assert matches(expression, device) in (True, False)


def test_string_format_arguments_are_exempt_as_upstream() -> None:
    # cel-go's strings extension exempts the arguments of format (ext/formatting.go)
    assert matches('"%s %s".format([1, "a"]) == "1 a"')


def test_the_text_test_keeps_plain_selectors_from_being_serialized() -> None:
    assert not _literals.may_mix('device.attributes["d"].model == "a"')
    assert _literals.may_mix('device.attributes["d"].model in ["a", "b"]')


def test_an_unforeseen_form_is_left_to_the_library() -> None:
    assert _literals.mixed_literal(b"not a checked expression") is None
    serialized = _device_env(True, None).compile('size([1, "a"]) == 2').serialize()
    assert _literals.mixed_literal(serialized) == (9, "expected type 'int' but found 'string'")
