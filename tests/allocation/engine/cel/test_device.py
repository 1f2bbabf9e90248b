"""resource.k8s.io/v1 device selectors (allocation/engine/cel/device.py)."""

from __future__ import annotations

import pytest

from allocation.engine.cel import (
    CelCompileError,
    CelEvaluationError,
    compile_device_selector,
)

DRIVER = "gpu.example.com"
DEVICE = {
    "name": "gpu-0",
    "attributes": {
        "model": {"string": "A100"},
        "cores": {"int": 108},
        "mig": {"bool": True},
        "driverVersion": {"version": "1.2.3"},
        "numa.example.com/node": {"int": 1},
    },
    "capacity": {"memory": {"value": "80Gi"}, "numa.example.com/bandwidth": {"value": "10G"}},
}


def matches(expression: str, device: dict | None = None, driver: str = DRIVER) -> bool:
    return compile_device_selector(expression).matches(driver, DEVICE if device is None
                                                       else device)


@pytest.mark.parametrize(("expression", "expected"), [
    ('device.driver == "gpu.example.com"', True),
    ('device.driver == "x"', False),
    ('device.attributes["gpu.example.com"].model == "A100"', True),
    ('device.attributes["gpu.example.com"].cores >= 100', True),
    ('device.attributes["gpu.example.com"].mig', True),
    ('device.attributes["numa.example.com"].node == 1', True),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) > 0', True),
    ('device.capacity["numa.example.com"].bandwidth.isLessThan(quantity("1G"))', False),
])
def test_simple_comparisons(expression: str, expected: bool) -> None:
    assert matches(expression) is expected


def test_missing_key_is_a_runtime_error() -> None:
    with pytest.raises(CelEvaluationError, match="no such key: nope"):
        matches('device.attributes["gpu.example.com"].nope == 1')


def test_operator_on_a_quantity_is_a_compile_error_with_its_position() -> None:
    with pytest.raises(CelCompileError) as caught:
        compile_device_selector('device.capacity["gpu.example.com"].memory >= "8Gi"')
    assert (caught.value.line, caught.value.column) == (1, 43)  # the ">="
    assert "'_>=_' applied to '(kubernetes.Quantity, string)'" in caught.value.message
