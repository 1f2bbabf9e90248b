"""One device of a ResourceSlice, parsed once per slice version for the v1 allocator
(docs/v1.md): its key, capacities with their request policies, counters consumed, taints
and binding conditions, and the per-device cache of selector results. Quantities are
parsed once per text (``quantity_value``).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

from allocation.engine.quantity import Quantity, quantity_format

__all__ = ["Device", "quantity_value"]


def quantity_value(text: Any) -> Fraction:
    """The exact value of a quantity string (or number)."""
    if isinstance(text, int | float):
        return Fraction(text)
    return _parsed(str(text))


@lru_cache(maxsize=4096)
def _parsed(text: str) -> Fraction:
    # Slices repeat a few quantity strings on every device; Fractions are immutable.
    return Quantity.parse(text).value


class Device:
    """One device of one slice, with its parsed fields; built once per slice version."""

    __slots__ = (
        "key",
        "name",
        "driver",
        "pool",
        "raw",
        "slice",
        "multi_raw",
        "capacity",
        "consumes",
        "taints",
        "binding_conditions",
        "binding_failure_conditions",
        "binds_to_node",
        "node_local",
        "node_selector",
        "selector_cache",
        "attributes",
        "no_policy",
    )

    def __init__(self, raw: dict, slice_: dict) -> None:
        spec = slice_["spec"]
        self.raw = raw
        self.slice = slice_
        self.name = raw["name"]
        self.driver = spec["driver"]
        self.pool = spec["pool"]["name"]
        self.key = (self.driver, self.pool, self.name)
        self.attributes = raw.get("attributes") or {}
        self.multi_raw = bool(raw.get("allowMultipleAllocations"))
        self.capacity = {name: _capacity(c) for name, c in (raw.get("capacity") or {}).items()}
        # no request policy: asked for nothing, it gives its whole capacity (capacity.py)
        self.no_policy = True
        for capacity in self.capacity.values():  # a loop, not any(): per device of a pool
            if capacity.has_policy:
                self.no_policy = False
        consumes = raw.get("consumesCounters")
        self.consumes = (
            [
                (
                    c["counterSet"],
                    {n: quantity_value(v["value"]) for n, v in (c.get("counters") or {}).items()},
                )
                for c in consumes
            ]
            if consumes
            else []
        )
        self.taints = raw.get("taints") or ()
        self.binding_conditions = raw.get("bindingConditions") or ()
        self.binding_failure_conditions = raw.get("bindingFailureConditions") or ()
        self.binds_to_node = bool(raw.get("bindsToNode"))
        # where an allocation of it may be used (``results.node_selector``): only on the
        # node it was allocated on, or where the selector of its slice (or its own, with
        # perDeviceNodeSelection) admits; read per pick, so read here once
        place = raw if spec.get("perDeviceNodeSelection") else spec
        self.node_local = bool(place.get("nodeName")) or self.binds_to_node
        self.node_selector = place.get("nodeSelector")
        self.selector_cache: dict[str, bool] = {}

    def __repr__(self) -> str:
        return "Device({}/{}/{})".format(*self.key)


_PLAIN_CAPACITIES: dict[tuple, _Capacity] = {}
"""``_Capacity`` of a capacity with a value only, by the value's type and text: the devices
of a cluster repeat a few (immutable once made; ``formats`` is the same for an equal raw)."""


def _capacity(raw: dict) -> _Capacity:
    if len(raw) != 1 or "value" not in raw:
        return _Capacity(raw)
    value = raw["value"]
    key = (type(value), value)
    found = _PLAIN_CAPACITIES.get(key)
    if found is None:
        if len(_PLAIN_CAPACITIES) >= 4096:
            _PLAIN_CAPACITIES.clear()
        found = _PLAIN_CAPACITIES[key] = _Capacity(raw)
    return found


class _Capacity:
    __slots__ = (
        "raw",
        "value",
        "default",
        "valid_values",
        "min",
        "max",
        "step",
        "has_policy",
        "has_range",
        "_formats",
    )

    def __init__(self, raw: dict) -> None:
        self.raw = raw
        self.value = quantity_value(raw["value"])
        policy = raw.get("requestPolicy")
        self.has_policy = policy is not None
        self.has_range = False
        self.default = self.valid_values = self.min = self.max = self.step = None
        self._formats = None
        if policy is None:
            return
        self.default = quantity_value(policy["default"]) if "default" in policy else None
        values = policy.get("validValues")
        self.valid_values = [quantity_value(v) for v in values] if values else None
        rng = policy.get("validRange")
        self.has_range = rng is not None
        rng = rng or {}
        self.min = quantity_value(rng["min"]) if "min" in rng else None
        self.max = quantity_value(rng["max"]) if "max" in rng else None
        self.step = quantity_value(rng["step"]) if "step" in rng else None

    @property
    def formats(self) -> dict:
        """The quantity formats upstream copies into consumedCapacity (capacity.py); read
        only for shared results, so made on first use."""
        if self._formats is None:
            policy = self.raw.get("requestPolicy") or {}
            rng = policy.get("validRange") or {}
            self._formats = {
                "value": quantity_format(self.raw["value"]),
                "default": quantity_format(policy.get("default", "")),
                "min": quantity_format(rng.get("min", "")),
                "valid": [quantity_format(v) for v in policy.get("validValues") or ()],
            }
        return self._formats
