"""What the tests of resource.k8s.io/v1 device selectors share (test_device*.py): a device,
and one-line checks of a selector's result or error."""

from __future__ import annotations

import pytest

from allocation.engine.cel import CelCompileError, CelEvaluationError, compile_device_selector

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
