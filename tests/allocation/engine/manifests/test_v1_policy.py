"""A capacity's requestPolicy (``manifests/v1_policy.py``), read through the loader."""

from __future__ import annotations

import pytest

from tests.allocation.engine.manifests.v1_docs import device, problems, slice_doc

_BASE = "spec.devices[0].capacity.memory.requestPolicy"


def _lines(policy: dict, value: str = "100", multi: bool = True) -> list[str]:
    fields = {"allowMultipleAllocations": True} if multi else {}
    return problems([slice_doc([device(capacity={"memory": {
        "value": value, "requestPolicy": policy}}, **fields)])])


def test_valid_policies():
    assert _lines({"default": "10", "validValues": ["10", "20", "100"]}) == []
    assert _lines({"default": "10", "validRange": {"min": "10", "max": "100",
                                                    "step": "10"}}) == []
    assert _lines({"default": "4", "validRange": {"min": "1"}}) == []


def test_policy_needs_multiple_allocations():
    assert _lines({"default": "1"}, multi=False) == [
        f"{_BASE}: may only be set when allowMultipleAllocations is true"]


@pytest.mark.parametrize(("policy", "expected"), [
    ({"default": "10", "validValues": ["20", "10"]},
     [f"{_BASE}.validValues[1]: 10 is not greater than 20: validValues must be strictly "
      "ascending"]),
    ({"default": "10", "validValues": ["10", "200"]},
     [f"{_BASE}.validValues[1]: 200 exceeds the capacity's value"]),
    ({"default": "5", "validValues": ["10"]},
     [f"{_BASE}.validValues: must contain the default"]),
    ({"default": "200"}, [f"{_BASE}.default: exceeds the capacity's value"]),
    ({"default": "5", "validRange": {"min": "10"}},
     [f"{_BASE}.validRange: the default must not be less than min"]),
    ({"default": "60", "validRange": {"min": "10", "max": "50", "step": "10"}},
     [f"{_BASE}.validRange: the default must not be greater than max"]),
    ({"validRange": {"min": "10", "max": "5"}},
     [f"{_BASE}.validRange.max: must not be less than min"]),
    ({"validRange": {"min": "10", "max": "200"}},
     [f"{_BASE}.validRange.max: exceeds the capacity's value"]),
    ({"validRange": {"min": "101"}},
     [f"{_BASE}.validRange.min: exceeds the capacity's value"]),
    ({"validRange": {"min": "10", "step": "0"}},
     [f"{_BASE}.validRange.step: must be greater than zero"]),
    ({"validRange": {"min": "10", "step": "91"}},
     [f"{_BASE}.validRange.step: min + step exceeds the capacity's value"]),
    ({"default": "15", "validRange": {"min": "10", "max": "50", "step": "10"}},
     [f"{_BASE}.validRange: the default must be min plus a multiple of step"]),
    ({"validRange": {"min": "10", "max": "55", "step": "10"}},
     [f"{_BASE}.validRange.max: must be min plus a multiple of step"]),
    ({"validValues": ["1"], "validRange": {"min": "1"}},
     [f"{_BASE}: at most one of validValues, validRange may be set, found validValues, "
      "validRange"]),
])
def test_invalid_policies(policy, expected):
    assert _lines(policy) == expected


def test_step_at_its_bound():
    assert _lines({"validRange": {"min": "10", "step": "90"}}) == []
