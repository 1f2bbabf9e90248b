"""The rules of a v1 capacity's ``requestPolicy`` (KEP-5075; spec section 1, docs/v1.md).

``validValues``: ascending, each at most the capacity's value, containing the default.
``validRange``: min <= default <= max <= value, step > 0, min + step <= value, and the
default and max on the grid min + k * step. Either needs a default. Where the spec is
silent the API server's validation decides: a default with neither is not checked
against the value, and two quantities are the same valid value, or on the step grid, as
their ``Quantity.Value()``s (integers, rounded up) are, as it compares them.
"""

from __future__ import annotations

import math
from fractions import Fraction

from allocation.engine.manifests.problems import ProblemList
from allocation.engine.quantity import Quantity

__all__ = ["check_request_policy"]


def _q(text: object) -> Fraction:
    return Quantity.parse(text).value


def _on_grid(amount: Fraction, minimum: Fraction, step: Fraction) -> bool:
    # the API server's arithmetic: Value()s, each rounded up to an integer
    return (math.ceil(amount) - math.ceil(minimum)) % math.ceil(step) == 0


def _valid_values(values: list, default: Fraction, capacity: Fraction, path: str,
                  problems: ProblemList) -> None:
    parsed = [_q(v) for v in values]
    for index in range(1, len(parsed)):
        if parsed[index] < parsed[index - 1]:
            problems.add(f"{path}[{index}]", f"{values[index]} is less than "
                         f"{values[index - 1]}: validValues must be in ascending order")
    first: dict[int, int] = {}  # Value() -> the index of the first value rounding to it
    for index, value in enumerate(parsed):
        if value > capacity:
            problems.add(f"{path}[{index}]", f"{values[index]} exceeds the capacity's value")
        earlier = first.setdefault(math.ceil(value), index)
        if earlier != index:
            same = "" if value == parsed[earlier] else \
                f" (both are {math.ceil(value)} rounded up, as the API server compares them)"
            problems.add(f"{path}[{index}]",
                         f"{values[index]} repeats validValues[{earlier}] {values[earlier]}{same}")
    if default not in parsed:
        problems.add(path, "must contain the default")


def _valid_range(spec: dict, default: Fraction, capacity: Fraction, path: str,
                 problems: ProblemList) -> None:
    minimum = _q(spec["min"])
    maximum = _q(spec["max"]) if spec.get("max") is not None else None
    step = _q(spec["step"]) if spec.get("step") is not None else None
    if minimum > capacity:
        problems.add(f"{path}.min", "exceeds the capacity's value")
    if maximum is not None:
        if maximum < minimum:
            problems.add(f"{path}.max", "must not be less than min")
        if maximum > capacity:
            problems.add(f"{path}.max", "exceeds the capacity's value")
    if default < minimum:
        problems.add(path, "the default must not be less than min")
    if maximum is not None and default > maximum:
        problems.add(path, "the default must not be greater than max")
    if step is None:
        return
    if step <= 0:
        problems.add(f"{path}.step", "must be greater than zero")
        return
    if minimum + step > capacity:
        problems.add(f"{path}.step", "min + step exceeds the capacity's value")
    if not _on_grid(default, minimum, step):
        problems.add(path, "the default must be min plus a multiple of step")
    if maximum is not None and not _on_grid(maximum, minimum, step):
        problems.add(f"{path}.max", "must be min plus a multiple of step")


def check_request_policy(capacity: dict, path: str, problems: ProblemList) -> None:
    """Report what is wrong with the ``requestPolicy`` of one schema-valid ``capacity``
    entry (``{value, requestPolicy}``) found at ``path``."""
    policy = capacity["requestPolicy"]
    where = f"{path}.requestPolicy"
    value = _q(capacity["value"])
    for name, check in (("validValues", _valid_values), ("validRange", _valid_range)):
        if policy.get(name) not in (None, []):  # an empty validValues is none (len() > 0)
            if policy.get("default") is None:
                problems.add(f"{where}.default", f"required when {name} is set")
            else:
                check(policy[name], _q(policy["default"]), value, f"{where}.{name}", problems)
