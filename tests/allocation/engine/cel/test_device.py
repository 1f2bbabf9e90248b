"""resource.k8s.io/v1 device selectors (allocation/engine/cel/device.py).

Expected values of the quantity and semver libraries are those of Kubernetes' own tests
(k8s.io/apiserver/pkg/cel/library quantity_test.go, semver_test.go) where they exist.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine.cel import (
    CelCompileError,
    CelCostError,
    CelEvaluationError,
    compile_device_selector,
    reset_stats,
    stats,
)

DRIVER = "gpu.example.com"
DEVICE = {
    "name": "gpu-0",
    "attributes": {
        "model": {"string": "A100"},
        "cores": {"int": 108},
        "mig": {"bool": True},
        "driverVersion": {"version": "1.2.3-rc.1+build.5"},
        "numa.example.com/node": {"int": 1},
    },
    "capacity": {"memory": {"value": "80Gi"}, "numa.example.com/bandwidth": {"value": "10G"}},
}


def matches(expression: str, device: dict | None = None, driver: str = DRIVER) -> bool:
    return compile_device_selector(expression).matches(driver, DEVICE if device is None
                                                       else device)


def value(expression: str) -> bool:
    """The result of a selector that does not look at the device."""
    return compile_device_selector(expression).matches(DRIVER, {})


def runtime_error(expression: str, device: dict | None = None) -> str:
    with pytest.raises(CelEvaluationError) as caught:
        matches(expression, device)
    return str(caught.value)


def compile_error(expression: str, **options: bool) -> CelCompileError:
    with pytest.raises(CelCompileError) as caught:
        compile_device_selector(expression, **options)
    return caught.value


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
    assert runtime_error('device.attributes["gpu.example.com"].cores > "x"') \
        == "no such overload: _>_(int64, string)"
    assert "no such overload" in runtime_error(
        'device.attributes["gpu.example.com"].model.compareTo(quantity("1")) == 0')


def test_a_result_that_is_not_bool_is_an_error() -> None:
    assert runtime_error('device.attributes["gpu.example.com"].model') \
        == "selector gave string, not bool"
    error = compile_error('device.driver')
    assert error.message == "must evaluate to bool or the unknown type, not string"


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
    ('kubernetes.Quantity{} == quantity("0")', "undeclared reference to 'kubernetes'"),
    ('.kubernetes.Semver{} == semver("0.0.0")', "undeclared reference to 'kubernetes'"),
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


# The result cache ---------------------------------------------------------------------------


def test_devices_with_the_same_values_read_share_one_evaluation() -> None:
    selector = compile_device_selector(
        'device.attributes["gpu.example.com"].model == "A100" && '
        'device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("1Gi"))')
    devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": "A100"},
                                                   "uuid": {"string": f"uuid-{i}"}},
                "capacity": {"memory": {"value": "80Gi"}}} for i in range(5)]
    reset_stats()
    assert all(selector.matches(DRIVER, device) for device in devices)
    assert (stats().lookups, stats().evaluations) == (5, 1)
    other = {"attributes": {"model": {"string": "A100"}}, "capacity": {"memory": {"value": "1Gi"}}}
    assert selector.matches(DRIVER, other) is False
    assert stats().evaluations == 2


def test_the_cache_keeps_types_apart() -> None:
    selector = compile_device_selector('device.attributes["gpu.example.com"].flag == true')
    assert selector.matches(DRIVER, {"attributes": {"flag": {"bool": True}}}) is True
    assert selector.matches(DRIVER, {"attributes": {"flag": {"int": 1}}}) is False
    assert selector.matches(DRIVER, {"attributes": {"flag": {"bool": True}}}) is True


def test_the_cache_key_follows_the_driver_filing() -> None:
    selector = compile_device_selector('device.attributes["gpu.example.com"].model == "A100"')
    device = {"attributes": {"model": {"string": "A100"}}}
    assert selector.matches(DRIVER, device) is True
    with pytest.raises(CelEvaluationError, match="no such key: model"):
        selector.matches("other.example.com", device)


def test_errors_are_cached_and_raised_each_time() -> None:
    selector = compile_device_selector('device.attributes["gpu.example.com"].nope == 1')
    for _ in range(2):
        with pytest.raises(CelEvaluationError, match="no such key: nope"):
            selector.matches(DRIVER, DEVICE)


def test_whole_domain_reads_see_every_value_of_the_domain() -> None:
    selector = compile_device_selector(
        'device.attributes["gpu.example.com"].exists(k, k.startsWith("x"))')
    assert selector.matches(DRIVER, {"attributes": {"a": {"int": 1}}}) is False
    assert selector.matches(DRIVER, {"attributes": {"a": {"int": 1}, "xb": {"int": 1}}}) is True
    assert selector.matches("other", {"attributes": {"xb": {"int": 1}}}) is False


def test_a_shadowed_device_variable_reads_everything() -> None:
    selector = compile_device_selector('[1].exists(device, device == 1) && '
                                       'size(device.attributes) == 1')
    assert selector.matches(DRIVER, {"attributes": {"a": {"int": 1}}}) is True
    assert selector.matches(DRIVER, {"attributes": {"a": {"int": 1}, "b/c": {"int": 1}}}) is False


def test_compiled_selectors_are_reused_per_source_and_gate() -> None:
    source = 'device.driver == "x"'
    assert compile_device_selector(source) is compile_device_selector(source)
    assert compile_device_selector(source) is not compile_device_selector(
        source, consumable_capacity=False)


def test_an_escaped_key_is_not_followed_but_read_as_a_whole() -> None:
    # CEL reads "\?" as "?": a wrong guess of the key would miss the value read.
    selector = compile_device_selector(r'device.attributes["gpu.example.com"]["a\?"] == 1')
    assert selector.matches(DRIVER, {"attributes": {"a?": {"int": 1}}}) is True
    assert selector.matches(DRIVER, {"attributes": {"a?": {"int": 2}}}) is False


_FRESH = itertools.count()
_DRIVERS = ("gpu.example.com", "other.example.com")
_VALUES = ({"string": "A100"}, {"string": "1"}, {"int": 1}, {"int": 2}, {"bool": True},
           {"version": "1.0.0"}, {"version": "1.0.0+b"})
_NAMES = ("model", "gpu.example.com/model", "cores", "other.example.com/cores", "uuid")
_SELECTORS = (
    'device.attributes["gpu.example.com"].model == "A100"',
    'device.attributes[device.driver].model == 1',
    '"cores" in device.attributes["other.example.com"]',
    'device.attributes["other.example.com"].cores > 1',
    'device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("1Gi"))',
    'device.attributes.exists(d, d == "gpu.example.com") && device.driver != "x"',
    'device.attributes["gpu.example.com"].exists(k, k == "model")',
    'has(device.attributes["gpu.example.com"].model)',
    'device.attributes["gpu.example.com"].model == semver("1.0.0")',
    "device.allowMultipleAllocations",
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(
    st.sampled_from(_DRIVERS),
    st.dictionaries(st.sampled_from(_NAMES), st.sampled_from(_VALUES), max_size=4),
    st.sampled_from(({}, {"memory": {"value": "1Gi"}}, {"memory": {"value": "1024Mi"}},
                     {"gpu.example.com/memory": {"value": "2Gi"}})),
    st.booleans()), min_size=1, max_size=12))
def test_a_warm_cache_answers_as_a_fresh_evaluation(devices: list) -> None:
    def outcome(selector, driver: str, device: dict) -> object:
        try:
            return selector.matches(driver, device)
        except CelEvaluationError as error:
            return str(error)

    for source in _SELECTORS:
        warm = compile_device_selector(source)
        for driver, attributes, capacity, multiple in devices:
            device = {"attributes": attributes, "capacity": capacity,
                      "allowMultipleAllocations": multiple}
            # A comment makes a distinct source: a new selector with an empty cache.
            fresh = compile_device_selector(f"{source} // {next(_FRESH)}")
            assert outcome(warm, driver, device) == outcome(fresh, driver, device)
