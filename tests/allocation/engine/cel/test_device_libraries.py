"""The quantity and semver libraries in resource.k8s.io/v1 device selectors
(allocation/engine/cel/device.py, the libraries in allocation/engine/cel/_k8s.py).

Expected values of the quantity and semver libraries are those of Kubernetes' own tests
(k8s.io/apiserver/pkg/cel/library quantity_test.go, semver_test.go) where they exist.
"""

from __future__ import annotations

import pytest

from tests.allocation.engine.cel.device_helpers import compile_error, runtime_error, value

# Operators on quantities and versions -------------------------------------------------------


@pytest.mark.parametrize(("expression", "column"), [
    ('device.capacity["gpu.example.com"].memory >= "8Gi"', 43),
    ('quantity("1") < quantity("2")', 15),
    ('semver("1.0.0") > semver("0.1.0")', 17),
    ('quantity("1").add(1) <= quantity("2")', 22),
    ('quantity("1") + quantity("2") == quantity("3")', 15),
    ('1 == quantity("1")', 3),
    ('semver("1.0.0") == quantity("1")', 17),
])
def test_operators_on_quantities_and_versions_are_compile_errors(expression: str,
                                                                 column: int) -> None:
    error = compile_error(expression)
    assert error.message.startswith("found no matching overload for '_")
    assert (error.line, error.column) == (1, column)


def test_equality_compares_values_as_kubernetes_equal_does() -> None:
    assert value('quantity("200M") == quantity("0.2G")')
    assert value('quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M")')
    assert not value('quantity("200M") == quantity("0.3G")')
    assert value('quantity("1") != quantity("2")')
    assert value('quantity("50k").add(quantity("20")) == quantity("50.02k")')
    assert value('quantity("49980") == quantity("50k").sub(20)')
    # Semver's Equal is Compare == 0: build metadata does not count.
    assert value('semver("1.0.0+a") == semver("1.0.0+b")')
    assert not value('semver("1.0.0-rc.1") == semver("1.0.0")')
    assert value('[quantity("1Ki")].exists(q, q == quantity("1024"))')


# The quantity library -----------------------------------------------------------------------


@pytest.mark.parametrize(("expression", "expected"), [
    ('isQuantity("20")', True),
    ('isQuantity("20M")', True),
    ('isQuantity("20Mi")', True),
    ('isQuantity("1.3G")', True),
    ('isQuantity("10000k")', True),
    ('isQuantity("20Mo")', False),
    ('isQuantity("10Mm")', False),
    ('isQuantity("1,3G")', False),
    ('isQuantity("200K")', False),
    ('isQuantity("Three")', False),
    ('isQuantity("Mi")', False),
    ('quantity("50M").isLessThan(quantity("50Mi"))', True),
    ('quantity("100M").isLessThan(quantity("50M"))', False),
    ('quantity("50Mi").isGreaterThan(quantity("50M"))', True),
    ('quantity("50M").isGreaterThan(quantity("100M"))', False),
    ('quantity("200M").compareTo(quantity("0.2G")) == 0', True),
    ('quantity("50M").compareTo(quantity("50Mi")) == -1', True),
    ('quantity("50Mi").compareTo(quantity("50M")) == 1', True),
    ('quantity("50k").add(20).isLessThan(quantity("50020"))', False),
    ('quantity("50k").add(20).sub(quantity("100k")).asInteger() == -49980', True),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() == 20', True),
    ('quantity("50k").asInteger() == 50000', True),
    ('quantity("50").isInteger()', True),
    ('quantity("1500m").isInteger()', False),
    ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
    ('quantity("9223372036854775808").isInteger()', False),  # one past int64
    ('quantity("50.703k").asApproximateFloat() == 50703.0', True),
    ('quantity("1.5").asApproximateFloat() == 1.5', True),
    ('quantity("50k").sub(20000).asApproximateFloat() == 30000.0', True),
    ('sign(quantity("5m")) == 1 && sign(quantity("-2Gi")) == -1 && sign(quantity("0")) == 0',
     True),
    ('[quantity("9999999999999999999999999999999999999")].all(x, '
     'x.add(quantity("1")).compareTo(x.add(quantity("2"))) == -1)', True),
    # Parsing as Kubernetes does: below 1n rounds up to 1n, binary values are capped at int64.
    ('quantity("0.1n") == quantity("1n")', True),
    ('quantity("-0.1n") == quantity("-1n")', True),
    ('quantity("16Ei") == quantity("9223372036854775807")', True),
])
def test_quantity_library(expression: str, expected: bool) -> None:
    assert value(expression) is expected


@pytest.mark.parametrize(("expression", "message"), [
    ('quantity("10Mo").isInteger()', "quantities must match the regular expression"),
    ('quantity("200K").isInteger()', "not a valid quantity"),
    ('quantity("9999999999999999999999999999999999999G").asInteger() == 0',
     "cannot convert value to integer"),
    ('quantity("1500m").asInteger() == 1', "cannot convert value to integer"),
])
def test_quantity_library_errors(expression: str, message: str) -> None:
    assert message in runtime_error(expression)


def test_sign_is_a_global_function_as_upstream_declares_it() -> None:
    assert "undeclared reference to 'sign'" in compile_error('quantity("1").sign() == 1').message
    assert "no matching overload for 'isQuantity'" in compile_error(
        "isQuantity([1, 2, 3])").message


# The semver library -------------------------------------------------------------------------


@pytest.mark.parametrize(("expression", "expected"), [
    ('isSemver("1.0.0")', True),
    ('isSemver("0.1.0-alpha.1+build.2")', True),
    ('isSemver("hello")', False),
    ('isSemver("v1.0")', False),
    ('isSemver("1.0")', False),
    ('isSemver("01.0.0")', False),
    ('isSemver("1.0.0-01")', False),
    ('isSemver(" 1.0.0")', False),
    ('isSemver("18446744073709551616.0.0")', False),
    ('isSemver("v1.0", true)', True),
    ('isSemver("01.01.01", true)', True),
    ('isSemver("1.0-rc", true)', False),
    ('isSemver("1.0.0", false)', True),
    ('isSemver("v1.0.0", false)', False),
    ('semver("v1.0.0", true) == semver("1.0.0")', True),
    ('semver("1.0", true) == semver("1.0.0")', True),
    ('semver("01.01.01", true) == semver("1.1.1")', True),
    ('semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2', True),
    ('semver("1.2.3").patch() == 3', True),
    ('semver("1.2.3").compareTo(semver("1.2.3")) == 0', True),
    ('semver("1.2.3").compareTo(semver("2.0.0")) == -1', True),
    ('semver("1.2.3").compareTo(semver("0.1.2")) == 1', True),
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
    ('semver("1.0.0-alpha.2").isLessThan(semver("1.0.0-alpha.10"))', True),
    ('semver("1.0.0-alpha.beta").isGreaterThan(semver("1.0.0-alpha.1"))', True),
    ('semver("2.0.0").isGreaterThan(semver("10.0.0"))', False),
    ('semver("18446744073709551615.0.0").major() == -1', True),  # Go's uint64 -> int64
])
def test_semver_library(expression: str, expected: bool) -> None:
    assert value(expression) is expected


@pytest.mark.parametrize("expression", [
    'semver("v1.0.0").major() == 1',
    'semver("1.0").major() == 1',
    'semver("Three").major() == 1',
    'semver("1.0-rc", true).major() == 1',
])
def test_semver_library_errors(expression: str) -> None:
    assert "is not a valid semantic version" in runtime_error(expression)


def test_quantity_and_semver_members_do_not_mix() -> None:
    message = compile_error('quantity("1").compareTo(semver("1.0.0")) == 0').message
    assert "no matching overload for 'compareTo'" in message
    assert "(kubernetes.Quantity, kubernetes.Semver)" in message
    assert "no such overload: compareTo(kubernetes.Semver, kubernetes.Quantity)" in runtime_error(
        'device.attributes["gpu.example.com"].driverVersion.compareTo(quantity("1")) == 0')
