"""Seed devices as v1 devices: typed attributes, capacities, names (spec ``v1.md`` section 5,
first two rows).

Attributes are read with the seed models' own parsers (``models.named.attribute_set``, the
partitionable model's tree walk), so inheritance and tolerant versions are the seed's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from math import lcm

from allocation.engine.attributes import Attribute
from allocation.engine.convert.names import attribute_id, dns_label
from allocation.engine.convert.selectors import LIST_TYPES
from allocation.engine.models import registry
from allocation.engine.models.named import attribute_set

__all__ = ["Device", "MAX_ENTRIES", "MAX_STRING", "convert_attributes", "named_devices",
           "partition_devices", "Warn"]

MAX_ENTRIES = 32
MAX_STRING = 64
#: ``warn(path, message, impossible)``: one lossy (or impossible) item.
Warn = Callable[[str, str, bool], None]


@dataclass
class Device:
    """One v1 device, where it came from (``path``), and its counter use (partitions)."""

    name: str
    path: str
    attributes: dict = field(default_factory=dict)
    capacity: dict = field(default_factory=dict)
    consumes: dict | None = None

    def manifest(self) -> dict:
        """The v1 Device object."""
        out: dict = {"name": self.name}
        if self.attributes:
            out["attributes"] = self.attributes
        if self.capacity:
            out["capacity"] = self.capacity
        if self.consumes is not None:
            out["consumesCounters"] = [self.consumes]
        return out


def convert_attributes(attributes: Iterable[Attribute], path: str, warn: Warn,
                       where_of: Callable[[str], str] | None = None) -> tuple[dict, dict]:
    """(v1 attributes, v1 capacity) of one device's typed seed attributes; ``where_of``
    gives an attribute's field path (default: the device's ``path``)."""
    attrs: dict = {}
    capacity: dict = {}
    for attribute in attributes:
        ident = attribute_id(attribute.name)
        where = where_of(attribute.name) if where_of else path
        if ident != attribute.name:
            warn(where, f"attribute name {attribute.name!r} is not a v1 id (a C identifier "
                 f"of at most 32 characters): renamed to {ident!r}", False)
        value = attribute.value
        if attribute.type == "quantity":
            capacity[ident] = {"value": str(value)}
            warn(where, f"quantity attribute {attribute.name!r} becomes capacity "
                 f"{ident!r}: matchAttribute cannot use it", False)
        elif attribute.type in LIST_TYPES:
            attrs[ident] = {"string": ",".join(str(item) for item in value)}
            warn(where, f"{attribute.type} {attribute.name!r} has no v1 type (1.35): "
                 "written as a comma-joined string; selectors split it", False)
        elif attribute.type == "version":
            attrs[ident] = {"version": str(value)}
        else:
            attrs[ident] = {attribute.type: value}
        text = attrs.get(ident, {}).get("string")
        if isinstance(text, str) and len(text) > MAX_STRING:
            attrs[ident] = {"string": text[:MAX_STRING]}
            warn(where, f"string value is {len(text)} characters, more than v1's "
                 f"{MAX_STRING}: cut to {MAX_STRING}", True)
    if len(attrs) + len(capacity) > MAX_ENTRIES:
        warn(path, f"{len(attrs) + len(capacity)} attributes and capacities, more than "
             f"v1's {MAX_ENTRIES} per device", True)
    return attrs, capacity


def _device_name(seed: str, path: str, warn: Warn) -> str:
    name = dns_label(seed)
    if name != seed:
        warn(path, f"device {seed!r} is named {name!r} (a DNS label) in v1", False)
    return name


def named_devices(entries: list[dict], path: str, warn: Warn) -> list[Device]:
    """The devices of ``namedResourcesWithAttributes`` (at ``path``)."""
    devices = []
    for index, entry in enumerate(entries):
        where = f"{path}[{index}]"
        positions = {item.get("name"): i for i, item in enumerate(entry.get("attributes") or ())}
        attrs, capacity = convert_attributes(
            attribute_set(entry.get("attributes")), where, warn,
            lambda name, where=where, positions=positions:
                f"{where}.attributes[{positions[name]}]")
        devices.append(Device(_device_name(entry["name"], f"{where}.name", warn), where,
                              attrs, capacity))
    return devices


def partition_devices(value: dict, node: str, driver: str, path: str, warn: Warn
                      ) -> tuple[list[tuple[str, dict]], list[Device]]:
    """Partition trees as shared counters: ``([(root, counter set)], leaf devices)``.

    One counter set per partitioned root, named after it, with one counter ``units``: the
    root's size in the smallest leaf share's units (a group divides its instance equally, as
    the seed's best-fit ``share``). Every leaf consumes its share. Roots without partitions
    are plain devices. The scheme lock has no counter encoding (spec section 5): warned once
    per partitioned root.
    """
    inventory = registry.get("partitionable").build_inventory(node, driver, [value])
    paths = dict(_leaf_paths(value.get("resourceInstances") or (), "", path))
    shares: dict[str, list] = {}
    for leaf in inventory.leaves:
        attributes, place = leaf.data
        shares.setdefault(place.root, []).append((leaf, Fraction(place.share)
                                                  .limit_denominator(1 << 20)))
    counter_sets: list[tuple[str, dict]] = []
    devices: list[Device] = []
    for root, leaves in shares.items():
        partitioned = root in inventory.inner
        set_name = dns_label(root)
        units = lcm(*(share.denominator for _, share in leaves))
        if partitioned:
            counter_sets.append((root, {"name": set_name,
                                        "counters": {"units": {"value": str(units)}}}))
            warn(paths.get(root, path), f"partition tree {root!r} becomes "
                 f"counter set {set_name!r} ({units} units): leaves of different "
                 "partition groups can now be mixed (the seed locks one scheme at a time); "
                 "needs DRAPartitionableDevices", False)
        for leaf, share in leaves:
            attributes, _ = leaf.data
            where = paths.get(leaf.id, path)
            attrs, capacity = convert_attributes(attributes, f"{where}.attributes", warn)
            name = dns_label(leaf.id)
            consumes = None
            if partitioned:
                consumes = {"counterSet": set_name, "counters": {
                    "units": {"value": str(share.numerator * units // share.denominator)}}}
            devices.append(Device(name, where, attrs, capacity, consumes))
    return counter_sets, devices


def _leaf_paths(instances, prefix: str, path: str):
    """(instance ID, field path) for every instance of a partition tree."""
    for index, instance in enumerate(instances):
        ident = f"{prefix}{instance['name']}"
        where = f"{path}.resourceInstances[{index}]"
        yield ident, where
        for g_index, group in enumerate(instance.get("partitions") or ()):
            yield from _leaf_paths(group.get("resourceInstances") or (),
                                   f"{ident}/{group['name']}/",
                                   f"{where}.partitions[{g_index}]")
