"""The result cache of resource.k8s.io/v1 device selectors (allocation/engine/cel/device.py):
devices alike in the values a selector reads share one evaluation (docs/cel.md,
"Result cache")."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine.cel import CelEvaluationError, compile_device_selector, reset_stats, stats
from tests.allocation.engine.cel.device_helpers import DEVICE, DRIVER

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
