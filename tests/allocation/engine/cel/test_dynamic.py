"""Upstream's run-time errors of == and in on dynamic values holding opaque ones
(allocation/engine/cel/_dynamic.py).

Every case was compared with Kubernetes' own CEL environment (k8s.io/dynamic-resource-allocation
``cel``, v0.36.2, through the celhar harness of docs/cel.md): the same value or error text.
"""

from __future__ import annotations

import pytest

from allocation.engine.cel import _dynamic
from tests.allocation.engine.cel.device_helpers import matches, runtime_error

A = 'device.attributes["gpu.example.com"]'
DEVICE = {"attributes": {"model": {"string": "A100"}, "cores": {"int": 108},
                         "mig": {"bool": True}, "ver": {"version": "1.2.3"}},
          "capacity": {"memory": {"value": "80Gi"}}}

VALUES = [
    ('device.attributes["gpu.example.com"].ver != "1.2.3"', True),
    ('device.attributes["gpu.example.com"].ver == semver("1.2.3")', True),
    ('device.attributes["gpu.example.com"].ver != semver("1.2.4")', True),
    ('"1.2.3" == device.attributes["gpu.example.com"].ver', False),
    ('device.attributes["gpu.example.com"].ver == device.attributes["gpu.example.com"].ver', True),
    (A + '.model == ' + A + '.ver', False),
    ('dyn(ip("1.2.3.4")) == ip("1.2.3.4")', True),
    ('device.attributes["gpu.example.com"].ver == "1.2.3" || true', True),
    ('true || device.attributes["gpu.example.com"].ver == "1.2.3"', True),
    ('device.attributes["gpu.example.com"].ver == "1.2.3" && false', False),
    ('device.attributes["gpu.example.com"].model == "A100"', True),
    ('device.attributes["gpu.example.com"].cores == 108.0', True),
    ('device.attributes["gpu.example.com"].mig == true', True),
    ('dyn([1]) in [1, 2]', False),
    ('dyn({"a": 1}) in [1, 2]', False),
    ('dyn(semver("1.2.3")) in []', False),
    ('dyn(quantity("1")) in ["1"]', False),
    ('dyn(ip("1.2.3.4")) in ["1.2.3.4"]', False),
    ('dyn(url("/a")) in ["/a"]', False),
    ('dyn(cidr("1.2.3.0/24")) in ["a"]', False),
    ('dyn(semver("1.2.3")) in [semver("1.2.3")]', True),
    ('dyn(semver("1.2.3")) in [1 + 1]', False),
    ('dyn(1.0) in [1]', True),
    ('dyn(1u) in [1.0]', True),
    ('dyn(true) in [1]', False),
    ('dyn(duration("1s")) in [1]', False),
    ('dyn(timestamp("2020-01-01T00:00:00Z")) in ["a"]', False),
    ('dyn(null) in [1]', False),
    ('dyn(semver("1.2.3+a")) == semver("1.2.3+b")', True),
    ('semver("1.2.3+a") == semver("1.2.3+b")', True),
    ('dyn(quantity("1Gi")) == quantity("1024Mi")', True),
    ('dyn(semver("1.2.3")) == dyn(semver("1.2.3"))', True),
    ('dyn(semver("1.2.3")) == null', False),
    ('dyn(1) == dyn(semver("1.2.3"))', False),
    ('true || dyn(semver("1.2.3")) in ["a"]', True),
    ('false && dyn(semver("1.2.3")) in ["a"]', False),
    ('[1, 2].exists(i, i == 1 || dyn(semver("1.2.3")) in ["a"])', True),
    ('true ? true : dyn(semver("1.2.3")) in ["a"]', True),
    ('device.attributes["gpu.example.com"].ver == "1.2.3" || true', True),
    ('true || device.attributes["gpu.example.com"].ver == "1.2.3"', True),
    (A + '.model == "A100" || ' + A + '.ver in ["1.2.3"]', True),
    ('cel.bind(x, dyn(semver("1.2.3")) in ["a"], true)', True),
]

ERRORS = [
    ('device.attributes["gpu.example.com"].ver == "1.2.3"',
     'no such overload'),
    ('device.attributes["gpu.example.com"].ver == 1',
     'no such overload'),
    ('device.attributes["gpu.example.com"].ver == device.attributes["gpu.example.com"].model',
     'no such overload'),
    ('dyn(semver("1.2.3")) == "1.2.3"',
     'no such overload'),
    ('dyn(quantity("1")) == 1',
     'no such overload'),
    ('dyn(ip("1.2.3.4")) == "1.2.3.4"',
     'no such overload'),
    ('dyn(cidr("1.2.3.4/32")) == dyn(ip("1.2.3.4"))',
     'no such overload'),
    ('device.attributes["gpu.example.com"].ver in ["1.2.3"]',
     'internal error: runtime error: hash of unhashable type cel.Semver'),
    ('[device.attributes["gpu.example.com"].ver].exists(v, v == "1.2.3")',
     'no such overload'),
    ('cel.bind(v, device.attributes["gpu.example.com"].ver, v == "1.2.3")',
     'no such overload'),
    ('dyn(semver("1.2.3")) in ["1.2.3"]',
     'internal error: runtime error: hash of unhashable type cel.Semver'),
    ('dyn(format.dns1123Label()) in ["a"]',
     'internal error: runtime error: hash of unhashable type cel.Format'),
    ('dyn(b"x") in ["x"]',
     'internal error: runtime error: hash of unhashable type types.Bytes'),
    ('dyn(url("/a")) == "/a"',
     'no such overload'),
    ('dyn(format.dns1123Label()) == "x"',
     'no such overload'),
    ('dyn(semver("1.2.3")) == dyn(1)',
     'no such overload'),
    ('dyn(semver("1.2.3")) in ["a"] || true',
     'internal error: runtime error: hash of unhashable type cel.Semver'),
    ('dyn(semver("1.2.3")) in ["a"] && false',
     'internal error: runtime error: hash of unhashable type cel.Semver'),
    ('[1, 2].exists(i, i == 2 || dyn(semver("1.2.3")) in ["a"])',
     'internal error: runtime error: hash of unhashable type cel.Semver'),
    ('[1, 2].all(i, i == 1 && dyn(semver("1.2.3")) in ["a"])',
     'internal error: runtime error: hash of unhashable type cel.Semver'),
    ('false ? true : dyn(semver("1.2.3")) in ["a"]',
     'internal error: runtime error: hash of unhashable type cel.Semver'),
    (A + '.ver in ["1.2.3"] || ' + A + '.model == "A100"',
     'internal error: runtime error: hash of unhashable type cel.Semver'),
    (A + '.model == "X" || ' + A + '.ver in ["1.2.3"]',
     'internal error: runtime error: hash of unhashable type cel.Semver'),
    ('cel.bind(x, dyn(semver("1.2.3")) in ["a"], x)',
     'internal error: runtime error: hash of unhashable type cel.Semver'),
]


@pytest.mark.parametrize(("expression", "expected"), VALUES)
def test_values_as_upstream(expression: str, expected: bool) -> None:
    assert matches(expression, DEVICE) is expected


@pytest.mark.parametrize(("expression", "message"), ERRORS)
def test_errors_as_upstream(expression: str, message: str) -> None:
    assert runtime_error(expression, DEVICE) == message


def test_a_panic_ends_the_evaluation_and_is_forgotten_after_it() -> None:
    # upstream's recovered panic is not a CEL error value: no || or && absorbs it
    expression = 'dyn(semver("1.2.3")) in ["a"] || true'
    assert "hash of unhashable type cel.Semver" in runtime_error(expression)
    assert _dynamic.take_panic() is None
    assert matches('dyn(semver("1.2.4")) in [semver("1.2.4")] || false')


def test_expressions_that_may_make_optional_values_keep_the_library_equality() -> None:
    # the library cannot hand an optional to Python; a dyn may hold one here, so the
    # comparison is the library's (false), not upstream's error (docs/cel.md)
    assert not matches('dyn(semver("1.2.3")) == "1.2.3" && [1].first().hasValue()')


def test_the_lists_renames_and_these_apply_together() -> None:
    # a typed sum (the lists library's rename) beside a comparison renamed here
    assert runtime_error('[1.0, 2.0].sum() == 3.0 && ' + A + '.ver == "1.2.3"',
                         DEVICE) == "no such overload"
    assert matches('[1.0, 2.0].sum() == 3.0 && ' + A + '.model == "A100"', DEVICE)
    assert matches('dyn([]).sum() == 0 && dyn(semver("1.0.0")) == semver("1.0.0")')
