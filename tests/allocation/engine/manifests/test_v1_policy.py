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
     [f"{_BASE}.validValues[1]: 10 is less than 20: validValues must be in ascending "
      "order"]),
    ({"default": "10", "validValues": ["10", "10"]},
     [f"{_BASE}.validValues[1]: 10 repeats validValues[0] 10"]),
    # The API server tells valid values apart by Quantity.Value(), rounded up to integers.
    ({"default": "1", "validValues": ["500m", "1"]},
     [f"{_BASE}.validValues[1]: 1 repeats validValues[0] 500m (both are 1 rounded up, as "
      "the API server compares them)"]),
    ({"validValues": ["10"]}, [f"{_BASE}.default: required when validValues is set"]),
    ({"validRange": {"min": "10"}}, [f"{_BASE}.default: required when validRange is set"]),
    ({"default": "10", "validValues": ["10", "200"]},
     [f"{_BASE}.validValues[1]: 200 exceeds the capacity's value"]),
    ({"default": "5", "validValues": ["10"]},
     [f"{_BASE}.validValues: must contain the default"]),
    ({"default": "5", "validRange": {"min": "10"}},
     [f"{_BASE}.validRange: the default must not be less than min"]),
    ({"default": "60", "validRange": {"min": "10", "max": "50", "step": "10"}},
     [f"{_BASE}.validRange: the default must not be greater than max"]),
    ({"default": "10", "validRange": {"min": "10", "max": "5"}},
     [f"{_BASE}.validRange.max: must not be less than min",
      f"{_BASE}.validRange: the default must not be greater than max"]),
    ({"default": "10", "validRange": {"min": "10", "max": "200"}},
     [f"{_BASE}.validRange.max: exceeds the capacity's value"]),
    ({"default": "101", "validRange": {"min": "101"}},
     [f"{_BASE}.validRange.min: exceeds the capacity's value"]),
    ({"default": "10", "validRange": {"min": "10", "step": "0"}},
     [f"{_BASE}.validRange.step: must be greater than zero"]),
    ({"default": "10", "validRange": {"min": "10", "step": "91"}},
     [f"{_BASE}.validRange.step: min + step exceeds the capacity's value"]),
    ({"default": "15", "validRange": {"min": "10", "max": "50", "step": "10"}},
     [f"{_BASE}.validRange: the default must be min plus a multiple of step"]),
    ({"default": "10", "validRange": {"min": "10", "max": "55", "step": "10"}},
     [f"{_BASE}.validRange.max: must be min plus a multiple of step"]),
    # on the grid as the API server computes it, with Value()s: 3 is off the grid of
    # step 1.5, rounded up to 2 (and 0.5 on that of step 1, test below)
    ({"default": "3", "validRange": {"min": "0", "step": "1500m"}},
     [f"{_BASE}.validRange: the default must be min plus a multiple of step"]),
    ({"validValues": ["1"], "validRange": {"min": "1"}},
     [f"{_BASE}: at most one of validValues, validRange may be set, found validValues, "
      "validRange"]),
])
def test_invalid_policies(policy, expected):
    assert _lines(policy) == expected


def test_step_at_its_bound():
    assert _lines({"default": "10", "validRange": {"min": "10", "step": "90"}}) == []


def test_a_default_alone_is_not_checked_against_the_value():
    # Upstream validates a default only against validValues or validRange: a default over
    # the value is accepted, and a request leaving the capacity out then never fits.
    assert _lines({"default": "200"}) == []
    assert _lines({"default": "200", "validRange": {"min": "10"}}) == []
    assert _lines({"validValues": [], "default": "1"}) == []
    assert _lines({"default": "500m", "validRange": {"min": "0", "step": "1"}}) == []
