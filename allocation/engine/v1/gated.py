"""Fields of the v1 kinds that belong to a feature gate (docs/v1.md, gated fields).

The API server drops a field whose gate is off when an object is created, so the planner
does the same and warns: ``drop_disabled_fields`` returns a copy without those fields and
the paths it dropped, each with its gate.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from allocation.engine.v1.features import Profile
from allocation.engine.v1_attribute_types import LIST_ATTRIBUTE_TYPES

__all__ = ["drop_disabled_fields", "as_mapping", "mappings"]

_LIST_TYPES = frozenset(LIST_ATTRIBUTE_TYPES)

_DEVICE = {
    "DRADeviceTaints": ("taints",),
    "DRAPartitionableDevices": ("consumesCounters", "nodeName", "nodeSelector", "allNodes"),
    "DRADeviceBindingConditions": ("bindsToNode", "bindingConditions",
                                   "bindingFailureConditions"),
    "DRAConsumableCapacity": ("allowMultipleAllocations",),
}
_REQUEST = {  # exactly{} and firstAvailable[] entries
    "DRADeviceTaints": ("tolerations",),
    "DRAConsumableCapacity": ("capacity",),
}
_CLAIM_GATES = ("DRAPrioritizedList", "DRAAdminAccess", *_REQUEST)
"""The gates of a claim's fields: with all of them on, nothing of a claim is dropped."""


def as_mapping(value: Any) -> dict:
    """``value`` if it is a mapping, else an empty one. For code that runs before the
    schema check, which reports a part of the wrong type: here it is passed over, never
    assumed (``drop_disabled_fields``, ``manifests/v1_convert``)."""
    return value if isinstance(value, dict) else {}


def mappings(value: Any) -> Iterator[tuple[int, dict]]:
    """The mappings of ``value`` with their indexes if it is a list, else none (as
    :func:`as_mapping`, before the schema check)."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield index, item


def _drop(obj: dict, names: tuple[str, ...], gate: str, path: str, profile: Profile,
          dropped: list[tuple[str, str]]) -> None:
    if profile.enabled(gate):
        return
    for name in names:
        if name in obj:
            del obj[name]
            dropped.append((f"{path}.{name}", gate))


def _any_list_attribute(devices: object) -> bool:
    """Whether a device of ``devices`` may have a list-type attribute: asked of every slice
    under 1.36's defaults, in the fewest steps (a plain loop beats ``map`` and ``chain``
    over a device's three or four attributes); True, for the full visit to sort out, when
    a part is not of its type."""
    try:
        for device in devices:
            attributes = device.get("attributes")
            if attributes:
                for entry in attributes.values():
                    for key in entry:
                        if key in _LIST_TYPES:
                            return True
    except (TypeError, AttributeError):
        return True
    return False


def drop_disabled_fields(doc: dict, profile: Profile, *, in_place: bool = False
                         ) -> tuple[dict, list[tuple[str, str]]]:
    """A copy of the v1 ``doc`` without the fields of disabled gates, and the dropped
    ``(field path, gate)`` pairs in document order. Kinds other than DeviceClass,
    ResourceSlice, ResourceClaim and ResourceClaimTemplate come back unchanged.
    ``in_place=True`` changes and returns ``doc`` itself (for a caller that owns a copy
    already: the loader copies every document once)."""
    if not in_place:
        doc = copy.deepcopy(doc)
    dropped: list[tuple[str, str]] = []
    kind = doc.get("kind")
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return doc, dropped
    if kind == "DeviceClass":
        _drop(spec, ("extendedResourceName",), "DRAExtendedResource", "spec", profile, dropped)
    elif kind == "ResourceSlice":
        _drop(spec, ("sharedCounters", "perDeviceNodeSelection"), "DRAPartitionableDevices",
              "spec", profile, dropped)
        # the gates that are off, once per slice: with every device gate on (the usual
        # profile) a slice's thousands of devices are not visited at all
        off = [(gate, names) for gate, names in _DEVICE.items() if not profile.enabled(gate)]
        policies = not profile.consumable_capacity
        # (before 1.36 the list types are unknown fields, which the rules refuse)
        lists = profile.drops_list_types and _any_list_attribute(spec.get("devices") or ())
        if off or policies or lists:
            for i, dev in mappings(spec.get("devices")):
                for gate, names in off:
                    _drop(dev, names, gate, f"spec.devices[{i}]", profile, dropped)
                if policies:
                    for name, cap in as_mapping(dev.get("capacity")).items():
                        _drop(as_mapping(cap), ("requestPolicy",), "DRAConsumableCapacity",
                              f"spec.devices[{i}].capacity[{name}]", profile, dropped)
                if lists:
                    for name, attr in as_mapping(dev.get("attributes")).items():
                        if type(attr) is dict and not _LIST_TYPES.isdisjoint(attr):
                            _drop(attr, LIST_ATTRIBUTE_TYPES, "DRAListTypeAttributes",
                                  f"spec.devices[{i}].attributes[{name}]", profile, dropped)
    elif kind in ("ResourceClaim", "ResourceClaimTemplate") and not all(
            profile.enabled(gate) for gate in _CLAIM_GATES):  # (every claim: 1.36's gates)
        prefix = "spec.spec" if kind == "ResourceClaimTemplate" else "spec"
        claim_spec = as_mapping(spec.get("spec")) if kind == "ResourceClaimTemplate" else spec
        devices = as_mapping(claim_spec.get("devices"))
        for i, req in mappings(devices.get("requests")):
            path = f"{prefix}.devices.requests[{i}]"
            _drop(req, ("firstAvailable",), "DRAPrioritizedList", path, profile, dropped)
            exactly = req.get("exactly")
            if isinstance(exactly, dict):
                _drop(exactly, ("adminAccess",), "DRAAdminAccess", f"{path}.exactly", profile,
                      dropped)
                for gate, names in _REQUEST.items():
                    _drop(exactly, names, gate, f"{path}.exactly", profile, dropped)
            for j, sub in mappings(req.get("firstAvailable")):
                for gate, names in _REQUEST.items():
                    _drop(sub, names, gate, f"{path}.firstAvailable[{j}]", profile, dropped)
        for i, con in mappings(devices.get("constraints")):
            _drop(con, ("distinctAttribute",), "DRAConsumableCapacity",
                  f"{prefix}.devices.constraints[{i}]", profile, dropped)
    return doc, dropped
