"""Seed slices and capacities as v1 ResourceSlices (spec ``v1.md`` section 5, rows 1-3 and
the DriverSimulation approximation).

A node's devices of one driver form the pool named after the node, generation 1; the
orchestrator sets ``resourceSliceCount`` once every slice of the pool is known. Slices hold at
most 128 devices, 64 when devices consume counters (spec section 1), and a counter set lives
in a slice of its own (1.35 allows devices or counters per slice, not both).
"""

from __future__ import annotations

from allocation.engine.constants import COUNTER_MODES
from allocation.engine.convert.devices import (
    Device,
    Warn,
    named_devices,
    partition_devices,
)
from allocation.engine.convert.names import dns_label, label_attribute
from allocation.engine.models.counter import COUNTER_API_VERSIONS

__all__ = ["V1", "COUNTER_MODES", "resource_slice", "slice_specs", "capacity_specs",
           "driver_simulation_specs", "node_selector", "MAX_DEVICES", "MAX_UNITS"]

V1 = "resource.k8s.io/v1"
MAX_DEVICES = 128
MAX_UNITS = 32 * MAX_DEVICES
"""The most devices one counter instance or DriverSimulation pool becomes (32 full slices;
a claim takes at most 32 devices): a count of 10^8 was 10^8 devices, gigabytes of them."""
_MAX_COUNTER_DEVICES = 64


def resource_slice(name: str, spec: dict) -> dict:
    """A v1 ResourceSlice document."""
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": spec}


def _spec(driver: str, node: str | None, pool: str, **fields) -> dict:
    spec: dict = {"driver": driver, "pool": {"name": pool, "generation": 1,
                                             "resourceSliceCount": 1}}
    if node is not None:
        spec["nodeName"] = node
    spec.update(fields)
    return spec


def _chunks(devices: list[Device]) -> list[list[Device]]:
    size = _MAX_COUNTER_DEVICES if any(d.consumes for d in devices) else MAX_DEVICES
    return [devices[i:i + size] for i in range(0, len(devices), size)] or [[]]


def slice_specs(spec: dict, node: str | None, pool: str, path: str, warn: Warn
                ) -> list[tuple[str, dict]]:
    """``[(name suffix, v1 slice spec)]`` for one NodeResourceSlice ``spec`` (``nodeName``
    ignored: ``node`` is used, None for a NodeGroup's inline slices)."""
    driver = spec["driverName"]
    out: list[tuple[str, dict]] = []
    if spec.get("namedResourcesWithAttributes") is not None:
        devices = named_devices(spec["namedResourcesWithAttributes"],
                                f"{path}.namedResourcesWithAttributes", warn)
    else:
        counter_sets, devices = partition_devices(spec["partitionable"], node or "",
                                                  driver, f"{path}.partitionable", warn)
        for root, counters in counter_sets:
            out.append((f"counters-{dns_label(root)}",
                        _spec(driver, node, pool, sharedCounters=[counters])))
    chunks = _chunks(devices)
    for index, chunk in enumerate(chunks):
        suffix = "" if len(chunks) == 1 else str(index)
        out.append((suffix, _spec(driver, node, pool,
                                  devices=[device.manifest() for device in chunk])))
    if len(chunks) > 1:
        warn(path, f"{len(devices)} devices are split over {len(chunks)} slices (v1 holds "
             f"at most {len(chunks[0])} per slice)", False)
    return out


def _labels(labels: dict, path: str, warn: Warn) -> dict:
    attrs = {}
    for key, value in sorted(labels.items()):
        name = label_attribute(key)
        if name != key:
            warn(f"{path}.{key}", f"label {key!r} becomes attribute {name!r}", False)
        attrs[name] = {"string": str(value)}
    return attrs


def capacity_specs(instances: list[dict], driver: str, node: str | None, pool: str,
                   mode: str, path: str, warn: Warn) -> list[tuple[str, dict]]:
    """``[(name suffix, v1 slice spec)]`` for counter instances (``mode`` one of
    COUNTER_MODES). ``units``: one device per unit, ``<instance>-<k>``, with the labels and
    ``instance`` as string attributes (claims match on ``instance``). ``consumable``: one
    device per instance with ``allowMultipleAllocations`` and capacity ``count``."""
    devices: list[Device] = []
    for index, instance in enumerate(instances):
        where = f"{path}[{index}]"
        if instance.get("apiVersion") not in COUNTER_API_VERSIONS \
                or instance.get("kind") != "Capacity":
            warn(where, f"numeric model {instance.get('apiVersion')} "
                 f"{instance.get('kind')} has no v1 form", True)
            continue
        data = instance.get("data") or {}
        labels = (data.get("metadata") or {}).get("labels") or {}
        count = int(data.get("count", data.get("Count", 0)))
        attrs = {**_labels(labels, f"{where}.data.metadata.labels", warn),
                 "instance": {"string": instance["id"]}}
        name = dns_label(instance["id"])
        if mode != "consumable" and count > MAX_UNITS:
            warn(f"{where}.data.count", f"{count} units would be {count} devices; the "
                 f"conversion writes at most {MAX_UNITS} per instance (--counters "
                 "consumable makes one device of any count)", True)
            continue
        if mode == "consumable":
            device = Device(name, where, attrs, {"count": {"value": str(count)}})
            devices.append(device)
            continue
        devices.extend(Device(f"{name}-{unit}", where, dict(attrs)) for unit in range(count))
    manifests = []
    chunks = _chunks(devices)
    for index, chunk in enumerate(chunks):
        suffix = "" if len(chunks) == 1 else str(index)
        items = [device.manifest() for device in chunk]
        if mode == "consumable":
            for item in items:
                item["allowMultipleAllocations"] = True
        manifests.append((suffix, _spec(driver, node, pool, devices=items)))
    if mode == "consumable" and devices:
        warn(path, "counter instances become devices with allowMultipleAllocations and "
             "capacity 'count': needs DRAConsumableCapacity (alpha before 1.36)", False)
    return manifests


def node_selector(selector: dict) -> dict:
    """A core NodeSelector with one term for a label selector."""
    expressions = [{"key": key, "operator": "In", "values": [value]}
                   for key, value in sorted((selector.get("matchLabels") or {}).items())]
    for expression in selector.get("matchExpressions") or ():
        item = {"key": expression["key"], "operator": expression["operator"]}
        if expression.get("values"):
            item["values"] = list(expression["values"])
        expressions.append(item)
    return {"nodeSelectorTerms": [{"matchExpressions": expressions}]}


def driver_simulation_specs(spec: dict, warn: Warn) -> list[tuple[str, dict]]:
    """The ``--lossy`` approximation of a DriverSimulation: per pool, a nodeSelector slice
    with ``count`` attribute-less devices (spec section 5); a pool of more than
    :data:`MAX_UNITS` is left out (said)."""
    driver = spec["controllerName"]
    out = []
    for index, pool in enumerate(spec.get("pools") or ()):
        if pool["count"] > MAX_UNITS:
            warn(f"spec.pools[{index}].count", f"{pool['count']} devices; the approximation "
                 f"writes at most {MAX_UNITS} per pool", True)
            continue
        devices = [{"name": f"{dns_label(pool['name'])}-{i}"} for i in range(pool["count"])]
        chunks = [devices[i:i + MAX_DEVICES] for i in range(0, len(devices), MAX_DEVICES)]
        for index, chunk in enumerate(chunks or [[]]):
            suffix = "" if len(chunks) <= 1 else f"-{index}"
            out.append((dns_label(pool["name"]) + suffix, {
                "driver": driver,
                "pool": {"name": pool["name"], "generation": 1, "resourceSliceCount": 1},
                "nodeSelector": node_selector(pool.get("nodeSelector") or {}),
                "devices": chunk}))
    return out

