"""Consumable capacity (KEP-5075): rounding requests up to a device's request policy,
checking what is left, and writing the consumed amounts as upstream serializes them
(docs/v1.md, consumable capacity)."""

from __future__ import annotations

import math
from fractions import Fraction

from allocation.engine.quantity import BINARY_SI, DECIMAL_SI, Quantity, go_quantity_text
from allocation.engine.v1.errors import AllocationError

__all__ = ["capacity_fits", "consumed_capacity", "consumed_texts", "slot_device"]


def _go_mod(a: int, b: int) -> int:
    # Go's % truncates towards zero
    return int(math.fmod(a, b)) if abs(a) < 2**52 and abs(b) < 2**52 else a - b * int(a / b)


def _consumed(requested: Fraction | None, cap, fmt: str = DECIMAL_SI) -> tuple[Fraction, str]:
    """The amount consumed and the quantity format upstream's result carries (the format of
    the quantity it was copied from; a rounded range step is a new BinarySI quantity)."""
    if requested is None:
        if cap.default is not None:
            return cap.default, cap.formats["default"]
        return cap.value, cap.formats["value"]
    if not cap.has_policy:
        return requested, fmt
    if cap.has_range and cap.min is not None:
        if requested < cap.min:
            return cap.min, cap.formats["min"]
        if cap.step is None:
            return requested, fmt
        # upstream uses Quantity.Value(): integers, rounded up
        req, step, low = math.ceil(requested), math.ceil(cap.step), math.ceil(cap.min)
        added = req - low
        n = int(added / step)
        if _go_mod(added, step) != 0:
            n += 1
        return Fraction(low + step * n), BINARY_SI
    if cap.valid_values is not None:
        for value, value_fmt in zip(cap.valid_values, cap.formats["valid"], strict=True):
            if requested <= value:
                return value, value_fmt
    return requested, fmt


def _violates(value: Fraction, cap) -> bool:
    if not cap.has_policy:
        return False
    if cap.default is not None and value == cap.default:
        return False
    if cap.has_range:
        if cap.max is not None and value > cap.max:
            return True
        if cap.step is not None:
            low = math.ceil(cap.min) if cap.min is not None else 0
            return _go_mod(math.ceil(value) - low, math.ceil(cap.step)) != 0
        return False
    if cap.valid_values:
        return value not in cap.valid_values
    return False


def consumed_capacity(requests: dict[str, Fraction] | None, device) -> dict[str, Fraction]:
    """What one allocation of ``device`` consumes, per capacity (zeros included)."""
    return {name: _consumed((requests or {}).get(name), cap)[0]
            for name, cap in device.capacity.items()}


def consumed_texts(requests: dict[str, Fraction] | None, formats: dict[str, str] | None,
                   device) -> dict[str, str]:
    """``consumedCapacity`` of one shared result as upstream writes it: every capacity,
    each amount in the format of the quantity it came from (``formats``: the request's)."""
    out = {}
    for name, cap in device.capacity.items():
        value, fmt = _consumed((requests or {}).get(name), cap,
                               (formats or {}).get(name, DECIMAL_SI))
        out[name] = go_quantity_text(value, fmt)
    return out


def capacity_fits(requests: dict[str, Fraction] | None, device,
                  recorded: dict[str, Fraction] | None,
                  allocating: dict[str, Fraction] | None) -> str:
    """Why ``device`` cannot serve ``requests`` now, or "" when it can.

    ``recorded`` is the capacity already consumed by shared allocations, ``allocating`` what
    this call took so far. The reason names the capacity, the numbers as quantities and,
    for a policy violation, the policy (the explain annotation shows it as it is).
    """
    if requests is None and recorded is None and allocating is None and device.no_policy:
        return ""  # each capacity gives its whole value, and nothing else takes any
    if requests:
        for name in requests:
            if name not in device.capacity:
                return f"capacity {name} is not defined"
    for name, cap in device.capacity.items():
        want = _consumed((requests or {}).get(name), cap)[0]
        if _violates(want, cap):
            return (f"capacity {name}: {_q(want)} violates the request policy "
                    f"({_policy(cap)})")
        total = want
        if recorded and name in recorded:
            total += recorded[name]
        if allocating and name in allocating:
            total += allocating[name]
        if total > cap.value:
            return (f"capacity {name}: needs {_q(want)}, {_q(cap.value - total + want)} left "
                    f"of {_q(cap.value)}")
    return ""


def _q(value: Fraction) -> str:
    return str(Quantity(value))


def _policy(cap) -> str:
    """A request policy in words: ``validRange min 1Gi, max 4Gi, step 1Gi`` or
    ``validValues 1Gi, 2Gi``, with its default."""
    if cap.has_range:
        parts = [f"{k} {_q(v)}" for k, v in (("min", cap.min), ("max", cap.max),
                                             ("step", cap.step)) if v is not None]
        text = "validRange " + ", ".join(parts)
    else:
        text = "validValues " + ", ".join(_q(v) for v in cap.valid_values or ())
    return text + (f"; default {_q(cap.default)}" if cap.default is not None else "")


def slot_device(profile, dev, view, slot: int):
    """The device whose capacity the last check of a pick reads.

    [1.34] v0.34.9's experimental allocateDevice passed the slot's index within its
    request where the device's index within its slice belongs, so it read the capacity
    (and the allocated and multi-allocation state) of device ``slot`` of the candidate's
    slice; a slice with fewer devices made upstream panic, which becomes a fatal error.
    """
    if not profile.capacity_reads_slot_device:
        return dev
    devices = view.devices
    if slot >= len(devices):
        raise AllocationError(
            f"device {'/'.join(dev.key)}: the 1.34 allocator reads device #{slot} of slice "
            f"{view.name}, which has {len(devices)} (upstream v0.34.9 panics: index out of "
            "range)")
    return devices[slot]
