"""Converting a loaded seed-dialect cluster to resource.k8s.io/v1, object by object.

Input is what the loader accepted (``manifests.load_texts``), built into a ``ClusterState``
so that parameters resolve exactly as for allocation. Output is a list of v1 (and passed
through) documents in input order, plus a :class:`Report`. An object with an impossible item
is left out unless ``lossy``; the caller decides what that means for its exit status.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from allocation.engine.attributes import AttributeSet
from allocation.engine.convert.claims import claim_document, claim_spec, flat_pod_claims
from allocation.engine.convert.classes import device_class
from allocation.engine.convert.report import Report, list_items
from allocation.engine.convert.slices import (
    COUNTER_MODES,
    capacity_specs,
    driver_simulation_specs,
    resource_slice,
    slice_specs,
)
from allocation.engine.manifests import LoadResult
from allocation.engine.models import registry
from allocation.engine.models.named import attribute_set
from allocation.engine.objects import KObject, NodeResourceSlice, ResourceClaim
from allocation.engine.objects.meta import json_copy
from allocation.engine.state import ClusterState

__all__ = ["Conversion", "convert_loaded", "attribute_types"]

_SEED_API = NodeResourceSlice.default_api_version  # resource.k8s.io/v1alpha2
_SEED_RESOURCE_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate"})
#: Kinds folded into the objects that reference them (a class, a claim): no document.
_FOLDED = frozenset({"ResourceClassParameters", "ResourceClaimParameters"})


@dataclass
class Conversion:
    """The converted documents (in input order) and what was lossy or impossible."""

    items: list[dict] = field(default_factory=list)
    report: Report = field(default_factory=Report)

    @property
    def complete(self) -> bool:
        """Whether every object had a v1 form (nothing impossible)."""
        return not self.report.failed


def _attribute_sets(spec: dict) -> list[AttributeSet]:
    if spec.get("namedResourcesWithAttributes") is not None:
        return [attribute_set(entry.get("attributes"))
                for entry in spec["namedResourcesWithAttributes"]]
    if spec.get("partitionable") is not None:
        inventory = registry.get("partitionable").build_inventory(
            "", spec.get("driverName", ""), [spec["partitionable"]])
        return [leaf.data[0] for leaf in inventory.leaves]
    return []


def attribute_types(objects: list[KObject]) -> dict[str, dict[str, str]]:
    """Per driver, each seed attribute name's type as the slices publish it (the first type
    seen wins), so a selector's ``attributes.m`` can be routed to capacity or attributes."""
    types: dict[str, dict[str, str]] = {}
    for obj in objects:
        specs = []
        if obj.kind_name == "NodeResourceSlice":
            specs = [obj.raw["spec"]]
        elif obj.kind_name == "NodeGroup":
            specs = list((obj.raw.get("spec") or {}).get("resourceSlices") or ())
        for spec in specs:
            driver = types.setdefault(spec.get("driverName", ""), {})
            for attributes in _attribute_sets(spec):
                for attribute in attributes:
                    driver.setdefault(attribute.name, attribute.type)
    return types


class _Converter:
    def __init__(self, state: ClusterState, objects: list[KObject], counters: str,
                 lossy: bool) -> None:
        if counters not in COUNTER_MODES:
            raise ValueError(f"unknown counters mode {counters!r}: use "
                             f"{' or '.join(COUNTER_MODES)}")
        self.state = state
        self.counters = counters
        self.types = attribute_types(objects)
        self.report = Report(lossy=lossy)
        self.devices: dict[tuple[str, str], dict[str, KObject]] = {}  # pool -> name -> obj

    def convert(self, obj: KObject) -> list[dict]:
        warn = self.report.for_object(obj)
        kind = obj.kind_name
        raw = obj.raw
        if kind in _SEED_RESOURCE_KINDS and obj.api_version != _SEED_API:
            return [json_copy(raw)]  # already resource.k8s.io/v1 (or v1beta*): unchanged
        if kind in _FOLDED:
            return []
        if kind == "NodeResourceSlice":
            spec = raw["spec"]
            return self._pooled(obj, slice_specs(spec, spec["nodeName"], spec["nodeName"],
                                                 "spec", warn), warn)
        if kind == "NodeResourceCapacity":
            return self._pooled(obj, capacity_specs(
                obj.instances, obj.driver_name, obj.node_name, obj.node_name, self.counters,
                "instances", warn), warn)
        if kind == "ResourceClass":
            if self.state.get("DeviceClass", None, obj.name) is not None:
                warn("metadata.name", f"the input has a DeviceClass {obj.name!r} already: "
                     "the class would be two objects of one name (the input's is kept)",
                     impossible=True)
                return []
            return [device_class(self.state, obj, self.types, warn)]
        if kind in ("ResourceClaim", "ResourceClaimTemplate"):
            return [self._claim(obj, warn)]
        if kind == "Pod":
            return [self._pod(raw, "spec")]
        if kind == "PodTemplate":
            return [self._pod(raw, "template")]
        if kind == "PodSchedulingContext":
            warn("", "PodSchedulingContext was removed in v1 (1.32); nothing replaces it",
                 impossible=True)
            return []
        if kind == "DriverSimulation":
            return self._driver_simulation(obj, warn)
        if kind == "NodeGroup":
            return [self._node_group(raw, warn)]
        return [json_copy(raw)]

    @staticmethod
    def _slices(obj: KObject, specs: list[tuple[str, dict]]) -> list[dict]:
        """v1 slices named after ``obj`` (plus a suffix), with its labels and annotations."""
        meta = obj.raw.get("metadata") or {}
        out = []
        for suffix, spec in specs:
            item = resource_slice(f"{obj.name}-{suffix}" if suffix else obj.name, spec)
            item["metadata"].update({key: json_copy(meta[key])
                                     for key in ("labels", "annotations") if meta.get(key)})
            out.append(item)
        return out

    def _pooled(self, obj: KObject, specs: list[tuple[str, dict]], warn) -> list[dict]:
        """The slices of ``obj``; a device name another seed object already put into the
        same v1 pool (node and driver) would make the pool invalid (spec section 3.2)."""
        where = "spec" if obj.kind_name == "NodeResourceSlice" else "instances"
        own: set[tuple[str, str, str]] = set()
        for _, spec in specs:
            names = self.devices.setdefault((spec["driver"], spec["pool"]["name"]), {})
            kept = []
            for device in spec.get("devices") or ():
                other = names.setdefault(device["name"], obj)
                if other is not obj:
                    warn(where, f"device {device['name']!r} is also in {other.kind_name} "
                         f"{other.name}, in the same v1 pool {spec['pool']['name']!r} of "
                         f"driver {spec['driver']!r}", impossible=True)
                key = (spec["driver"], spec["pool"]["name"], device["name"])
                if key in own:  # two seed names made one DNS label (a/b-c, a-b/c)
                    warn(where, f"two devices become {device['name']!r} in the v1 pool "
                         f"{spec['pool']['name']!r}: their seed names differ only in "
                         "characters a DNS label cannot hold (the first is kept)",
                         impossible=True)
                    continue
                own.add(key)
                kept.append(device)
            if "devices" in spec:
                spec["devices"] = kept
        return self._slices(obj, specs)

    def _claim(self, obj: KObject, warn) -> dict:
        raw = obj.raw
        if obj.kind_name == "ResourceClaim":
            claim, path = obj, "spec"
            status = raw.get("status") or {}
            if any(status.get(key) for key in ("allocation", "reservedFor", "driverName")):
                warn("status", "the seed allocation and reservations are dropped: the "
                     "planner allocates the v1 claim again")
            if status.get("deallocationRequested"):
                warn("status.deallocationRequested", "no v1 form (a control-plane "
                     "controller's deallocation): dropped")
        else:
            claim = ResourceClaim({"apiVersion": raw["apiVersion"], "kind": "ResourceClaim",
                                   "metadata": {"name": obj.name,
                                                "namespace": obj.namespace},
                                   "spec": raw["spec"]["spec"]})
            path = "spec.spec"
        spec = claim_spec(self.state, claim, self.types, self.counters, warn, path)
        return claim_document(obj.kind_name, raw, spec)

    @staticmethod
    def _pod(raw: dict, where: str) -> dict:
        out = json_copy(raw)
        if where == "spec":
            out["spec"] = flat_pod_claims(out.get("spec") or {})
        else:
            template = out.get("template") or {}
            if template.get("spec"):
                template["spec"] = flat_pod_claims(template["spec"])
        return out

    def _driver_simulation(self, obj: KObject, warn) -> list[dict]:
        spec = obj.raw["spec"]
        warn("", "DriverSimulation stands in for a control-plane controller, removed in v1 "
             "(1.32): approximated by nodeSelector ResourceSlices of 'count' devices",
             impossible=True)
        if spec.get("requestCount"):
            warn("spec.requestCount", "a per-claim device count computed from the vendor "
                 "parameters has no v1 form (claims take one device)", impossible=True)
        return self._slices(obj, driver_simulation_specs(spec, warn))

    def _node_group(self, raw: dict, warn) -> dict:
        out = json_copy(raw)
        spec = out.get("spec") or {}
        converted: list[dict] = []
        for index, entry in enumerate(spec.get("resourceSlices") or ()):
            converted.extend(item for _, item in slice_specs(
                entry, None, "", f"spec.resourceSlices[{index}]", warn))
        for index, entry in enumerate(spec.pop("resourceCapacities", None) or ()):
            converted.extend(item for _, item in capacity_specs(
                entry.get("instances") or [], entry["driverName"], None, "", self.counters,
                f"spec.resourceCapacities[{index}].instances", warn))
            warn(f"spec.resourceCapacities[{index}]", "counter capacities become v1 slice "
                 "specs in spec.resourceSlices")
        if converted:
            for item in converted:  # the pool's name is the new node's, set when it is added
                del item["pool"]["name"]
                same = [other for other in converted if other["driver"] == item["driver"]]
                item["pool"]["resourceSliceCount"] = len(same)
            spec["resourceSlices"] = converted
        return out


def _unique_slice_names(items: list[dict]) -> None:
    """Slices from different seed kinds may share a name (a NodeResourceSlice and a
    NodeResourceCapacity both called ``node-1``): later ones get ``-2``, ``-3``, ..."""
    used: set[str] = set()
    for item in items:
        if item.get("kind") != "ResourceSlice":
            continue
        name, number = item["metadata"]["name"], 1
        while name in used:
            number += 1
            name = f"{item['metadata']['name']}-{number}"
        item["metadata"]["name"] = name
        used.add(name)


def _count_pools(items: list[dict]) -> None:
    """Every slice's ``resourceSliceCount``: the slices of its (driver, pool)."""
    pools: dict[tuple, int] = {}
    slices = [item for item in items if item.get("kind") == "ResourceSlice"]
    for item in slices:
        key = (item["spec"]["driver"], item["spec"]["pool"]["name"])
        pools[key] = pools.get(key, 0) + 1
    for item in slices:
        item["spec"]["pool"]["resourceSliceCount"] = pools[
            (item["spec"]["driver"], item["spec"]["pool"]["name"])]


def convert_loaded(loaded: LoadResult, *, counters: str = "units", lossy: bool = False,
                   texts: Iterable[tuple[str, str]] = ()) -> Conversion:
    """Convert every loaded object to v1 (spec ``v1.md`` section 5).

    ``texts``: the ``(file name, text)`` pairs ``loaded`` was read from, so that warnings
    about items of a ``kind: List`` name them ``items[i].`` as the loader does.

    Returns:
        The documents and the report; objects with an impossible item are left out unless
        ``lossy`` (then their approximation is included, still reported).
    Raises:
        InvalidManifests: the input's status is inconsistent (as ``simulate`` reports it).
        ValueError: an unknown ``counters`` mode.
    """
    state = ClusterState.build(loaded)
    converter = _Converter(state, loaded.objects, counters, lossy)
    converter.report.items = list_items(texts)
    result = Conversion(report=converter.report)
    for obj in loaded.objects:
        documents = converter.convert(obj)
        if converter.report.failed_object(obj) and not lossy:
            continue
        result.items.extend(documents)
    result.items.extend(json_copy(event.raw) for event in loaded.events)
    _unique_slice_names(result.items)
    _count_pools(result.items)
    return result
