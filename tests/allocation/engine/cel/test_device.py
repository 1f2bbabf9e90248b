"""resource.k8s.io/v1 device selectors (allocation/engine/cel/device.py): the device variable,
compile and run-time errors, the standard extensions and the limits.

The quantity and semver libraries are tested in test_device_libraries.py, the result cache in
test_device_cache.py.
"""

from __future__ import annotations

import pytest

from allocation.engine.cel import CelCostError, CelEvaluationError, compile_device_selector
from tests.allocation.engine.cel.device_helpers import DRIVER, compile_error, matches, runtime_error

# The device variable ------------------------------------------------------------------------


@pytest.mark.parametrize(("expression", "expected"), [
    ('device.driver == "gpu.example.com"', True),
    ('device.driver == "x"', False),
    ('device.attributes["gpu.example.com"].model == "A100"', True),
    ('device.attributes["gpu.example.com"]["model"] == "A100"', True),
    ('device.attributes["gpu.example.com"].cores >= 100', True),
    ('device.attributes["gpu.example.com"].cores > 2.5', True),  # dyn: cross-type numbers
    ('device.attributes["gpu.example.com"].mig', True),
    ('device.attributes["numa.example.com"].node == 1', True),
    ('device.attributes[device.driver].model == "A100"', True),
    ('device.attributes["numa.example.com"]["node"] == 1', True),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) > 0', True),
    ('device.capacity["gpu.example.com"].memory == quantity("81920Mi")', True),
    ('device.capacity["numa.example.com"].bandwidth.isLessThan(quantity("1G"))', False),
    ('device.attributes["gpu.example.com"].driverVersion.isLessThan(semver("1.2.3"))', True),
    ('device.attributes["gpu.example.com"].driverVersion == semver("1.2.3-rc.1")', True),
    ('"model" in device.attributes["gpu.example.com"]', True),
    ('size(device.attributes) == 2 && size(device.capacity["gpu.example.com"]) == 1', True),
    ('device.attributes.exists(d, d == "numa.example.com")', True),
])
def test_device_fields(expression: str, expected: bool) -> None:
    assert matches(expression) is expected


def test_bare_names_belong_to_the_driver_domain_and_qualified_names_to_theirs() -> None:
    qualified = {"attributes": {"gpu.example.com/model": {"string": "A100"}},
                 "capacity": {"gpu.example.com/memory": {"value": "1Gi"}}}
    selector = ('device.attributes["gpu.example.com"].model == "A100" && '
                'device.capacity["gpu.example.com"].memory == quantity("1Gi")')
    assert matches(selector, qualified)
    bare = {"attributes": {"model": {"string": "A100"}}, "capacity": {"memory": {"value": "1Gi"}}}
    assert matches(selector, bare)
    assert not matches('"model" in device.attributes["gpu.example.com"]', bare,
                       driver="other.example.com")
    assert matches('device.attributes["other.example.com"].model == "A100"', bare,
                   driver="other.example.com")


def test_a_qualified_name_wins_over_the_same_bare_name() -> None:
    both = {"attributes": {"model": {"string": "bare"},
                           "gpu.example.com/model": {"string": "qualified"}}}
    assert matches('device.attributes["gpu.example.com"].model == "qualified"', both)
    assert matches('device.attributes["gpu.example.com"] == {"model": "qualified"}', both)


def test_an_unknown_domain_is_an_empty_map() -> None:
    assert not matches('"x" in device.attributes["other.example.com"]')
    assert matches('size(device.capacity["other.example.com"]) == 0')
    assert matches('device.attributes["other.example.com"] == {}')
    # ...but the map of domains itself only holds the real ones.
    assert matches('!("other.example.com" in device.attributes)')


def test_a_single_label_domain_can_be_selected_as_a_field() -> None:
    device = {"attributes": {"local/x": {"int": 1}, "kubernetes/Quantity": {"int": 2}}}
    assert matches("device.attributes.local.x == 1", device)
    assert matches('!("x" in device.attributes.remote)', device)
    assert matches("device.attributes.kubernetes.Quantity == 2", device)


def test_a_missing_id_is_a_runtime_error() -> None:
    assert runtime_error('device.attributes["gpu.example.com"].nope == 1') == "no such key: nope"
    assert runtime_error('device.attributes["other.example.com"].nope == 1') \
        == "no such key: nope"
    assert "no such key" in runtime_error(
        'device.capacity["gpu.example.com"].nope.isInteger()')


def test_a_type_mismatch_on_an_attribute_is_a_runtime_error() -> None:
    # cel-go's words, as upstream's allocator reports them (docs/v1.md "The boundary")
    assert runtime_error('device.attributes["gpu.example.com"].cores > "x"') \
        == "no such overload"
    assert runtime_error('device.attributes["gpu.example.com"].cores.startsWith("x")') \
        == "no such overload"
    assert runtime_error('!device.attributes["gpu.example.com"].model') == "no such overload"
    assert runtime_error('device.attributes["gpu.example.com"].cores.size() == 1') \
        == "no such overload: size"
    assert runtime_error('device.attributes["gpu.example.com"].driverVersion > "1.0.0"') \
        == "no such overload: _>_"
    assert "no such overload" in runtime_error(
        'device.attributes["gpu.example.com"].model.compareTo(quantity("1")) == 0')


def test_arithmetic_index_and_conversion_errors_say_what_cel_go_says() -> None:
    attr = 'device.attributes["gpu.example.com"]'
    assert runtime_error(f"{attr}.cores / 0 == 1") == "division by zero"
    assert runtime_error(f"{attr}.cores % 0 == 1") == "modulus by zero"
    assert runtime_error(f"[1, 2][{attr}.cores] == 1") == "index out of bounds: 108"
    assert runtime_error(f"int({attr}.model) == 1") \
        == "type conversion error from 'string' to 'int'"


def test_a_result_that_is_not_bool_is_an_error() -> None:
    assert runtime_error('device.attributes["gpu.example.com"].model') \
        == "selector gave string, not bool"
    error = compile_error('device.driver')
    assert error.message == "must evaluate to bool or the unknown type, not string"
    # cel-cpp has no type for a map keyed by double, which cel-go's checker accepts: such a
    # result is refused as not bool (as cel-go refuses it), never a crash
    for source in ("{1.5: 1}", "[{1.5: 1}]"):
        assert compile_error(source).message == ("must evaluate to bool or the unknown type, "
                                                 "not a map or list holding a map with "
                                                 "double keys")


def test_allow_multiple_allocations_exists_only_with_consumable_capacity() -> None:
    expression = "device.allowMultipleAllocations"
    assert not matches(expression)
    assert matches(expression, {"allowMultipleAllocations": True})
    error = compile_error(expression, consumable_capacity=False)
    assert "undeclared reference to 'device.allowMultipleAllocations'" in error.message
    assert (error.line, error.column) == (1, 7)
    without = compile_device_selector('device.driver != ""', consumable_capacity=False)
    assert without.matches(DRIVER, {"allowMultipleAllocations": True})


@pytest.mark.parametrize(("expression", "message"), [
    ("device.nope", "undeclared reference to 'device.nope'"),
    ("device", "undeclared reference to 'device'"),
    ("nope(1)", "undeclared reference to 'nope'"),
    ('device.driver == "x" &&', "the expression ends too early"),
    ('quantity("1").draplanner_canonical_text_of_the_value == "1"',
     "undeclared reference to 'draplanner_canonical_text_of_the_value'"),
    ('size(url("/").draplanner_form_of_the_value) == 1',
     "undeclared reference to 'draplanner_form_of_the_value'"),
    ('kubernetes.Quantity{} == quantity("0")',
     "undeclared reference to 'kubernetes.Quantity' (in container '')"),
    ('.kubernetes.Semver{} == semver("0.0.0")',
     "undeclared reference to '.kubernetes.Semver' (in container '')"),
    # Literals Kubernetes' AST validators check when compiling.
    ('device.driver.matches("(")', "invalid matches argument: invalid regular expression"),
    ('duration("1x") > duration("1s")', "invalid duration argument"),
    ('timestamp("bad") < timestamp("2020-01-01T00:00:00Z")', "invalid timestamp argument"),
])
def test_compile_errors(expression: str, message: str) -> None:
    error = compile_error(expression)
    assert message in error.message
    assert error.line == 1 and error.column is not None


def test_invalid_values_in_the_device_are_runtime_errors() -> None:
    assert "out of the int64 range" in runtime_error('device.attributes["gpu.example.com"].n > 1', {
        "attributes": {"n": {"int": 2**63}}})
    assert "int value 1.5 has the wrong type" in runtime_error(
        'device.attributes["gpu.example.com"].n > 1', {"attributes": {"n": {"int": 1.5}}})
    assert "needs exactly one of int, bool, string, version" in runtime_error(
        'device.attributes["gpu.example.com"].n > 1', {"attributes": {"n": {"intValues": [1]}}})
    assert "device attributes: not a map" in runtime_error('size(device.attributes) == 0',
                                                           {"attributes": "junk"})
    assert "device attribute v: '1.0' is not a valid semantic version" in runtime_error(
        'device.attributes["gpu.example.com"].v.major() == 1', {"attributes": {
            "v": {"version": "1.0"}}})
    assert "device capacity m:" in runtime_error(
        'device.capacity["gpu.example.com"].m.isInteger()', {"capacity": {
            "m": {"value": "lots"}}})


# Extensions ---------------------------------------------------------------------------------


@pytest.mark.parametrize("expression", [
    'cel.bind(gpu, device.attributes["gpu.example.com"], gpu.model == "A100" && gpu.cores > 1)',
    'device.attributes["gpu.example.com"].?nope.orValue(7) == 7',
    'device.attributes[?"gpu.example.com"].hasValue()',
    'device.attributes["gpu.example.com"].model.lowerAscii() == "a100"',
    'device.attributes["gpu.example.com"].model.matches("^A[0-9]+$")',
    '"a,b".split(",") == ["a", "b"] && "%d-%s".format([1, "x"]) == "1-x"',
    'sets.contains([1, 2], [1]) && sets.intersects([1], [1, 2])',
    '[2, 1].sort() == [1, 2] && lists.range(2) == [0, 1] && [[1], [2]].flatten() == [1, 2]',
    'device.attributes["gpu.example.com"].exists(k, v, k == "cores" && v == 108)',
])
def test_standard_extensions(expression: str) -> None:
    assert matches(expression)


# Limits -------------------------------------------------------------------------------------


def test_expressions_over_10_kib_are_refused() -> None:
    expression = " || ".join(['device.driver == "x"'] * 500)
    assert len(expression) > 10 * 1024
    assert "longer than the 10240-byte limit" in compile_error(expression).message


def test_the_estimated_cost_is_limited_to_one_million() -> None:
    domain = 'device.attributes["d"]'
    cheap = compile_device_selector(f'{domain}.all(x, {domain}.all(y, x != y))')
    assert 0 < cheap.estimated_cost < 1_000_000
    with pytest.raises(CelCostError, match="exceeds the limit of 1,000,000"):
        compile_device_selector(
            f"{domain}.all(w, {domain}.all(x, {domain}.all(y, {domain}.all(z, w != z))))")


def test_devices_beyond_the_declared_bounds_are_checked_against_the_budget() -> None:
    domain = 'device.attributes["d"]'
    selector = compile_device_selector(
        f"{domain}.all(x, {domain}.all(y, {domain}.all(z, x != y || y != z)))")
    assert 500_000 < selector.estimated_cost < 1_000_000
    small = {"attributes": {f"d/a{i}": {"int": i} for i in range(20)}}
    assert selector.matches("other", small) is False
    large = {"attributes": {f"d/a{i}": {"int": i} for i in range(300)}}
    with pytest.raises(CelEvaluationError, match="over budget, not evaluated"):
        selector.matches("other", large)
