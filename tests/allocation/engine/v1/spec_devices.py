"""The oracle's view of one node, written from the spec without the allocator's code
(``test_oracle.py`` says how the oracle is used): the devices a node sees (section 3.2) and
what the committed allocations hold (section 3.1). The rules over them are in
``spec_oracle.py``."""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

from allocation.engine.labels import node_selector_matches
from allocation.engine.quantity import Quantity
from allocation.engine.v1.pools import node_view
from tests.allocation.engine.v1.random_clusters import Cluster


def exact(text) -> Fraction:
    """The exact value of a quantity (``"80Gi"``, ``4``)."""
    return Quantity.parse(str(text)).value


# -- the cluster as the spec describes it (section 3.2) --

class Dev:
    """One device visible on the node, with what the oracle needs."""

    def __init__(self, index: int, slice_: dict, raw: dict) -> None:
        spec = slice_["spec"]
        self.index = index
        self.driver = spec["driver"]
        self.pool = spec["pool"]["name"]
        self.key = (self.driver, self.pool, raw["name"])
        self.raw = raw
        self.multi = bool(raw.get("allowMultipleAllocations"))


def _node_match(node: dict, spec: dict) -> bool:
    if spec.get("nodeName"):
        return spec["nodeName"] == node["metadata"]["name"]
    if spec.get("allNodes"):
        return True
    if spec.get("nodeSelector"):
        return node_selector_matches(spec["nodeSelector"], node_view(node))
    return False


def visible(cluster: Cluster, node: dict):
    """(usable devices, counter sets per pool, every device per pool, pool problems)."""
    partitionable = cluster.profile.partitionable_devices
    groups: dict = defaultdict(list)
    for s in cluster.slices:
        spec = s["spec"]
        if spec.get("sharedCounters"):
            if not partitionable:
                continue
        elif spec.get("perDeviceNodeSelection"):
            if not any(_node_match(node, d) for d in spec.get("devices") or ()):
                continue
        elif not _node_match(node, spec):
            continue
        groups[(spec["driver"], spec["pool"]["name"])].append(s)
    devices, counter_sets, pool_devices, problems = [], {}, {}, False
    for key in sorted(groups):
        kept = groups[key]
        gen = max(s["spec"]["pool"]["generation"] for s in kept)
        kept = [s for s in kept if s["spec"]["pool"]["generation"] == gen]
        everywhere = [s for s in cluster.slices
                      if (s["spec"]["driver"], s["spec"]["pool"]["name"]) == key]
        if any(s["spec"]["pool"]["generation"] > gen for s in everywhere):
            continue  # a newer generation elsewhere: the pool is obsolete here
        same = [s for s in everywhere if s["spec"]["pool"]["generation"] == gen]
        if len(same) != kept[0]["spec"]["pool"]["resourceSliceCount"]:
            problems = True  # incomplete: never allocated from
            continue
        sets = {}
        for s in same:
            for cs in s["spec"].get("sharedCounters") or ():
                sets[cs["name"]] = {n: exact(c["value"]) for n, c in cs["counters"].items()}
        counter_sets[key] = sets
        pool_devices[key] = [(s, d) for s in same for d in s["spec"].get("devices") or ()]
        for s in sorted(kept, key=lambda s: s["metadata"]["name"]):
            for d in s["spec"].get("devices") or ():
                if not s["spec"].get("perDeviceNodeSelection") or _node_match(node, d):
                    devices.append(Dev(len(devices), s, d))
    return devices, counter_sets, pool_devices, problems


# -- the state before the attempt, from the committed allocations (section 3.1) --

class Book:
    def __init__(self, allocations: dict[str, dict]) -> None:
        self.dedicated: set = set()
        self.shared_sums: dict = defaultdict(lambda: defaultdict(Fraction))
        self.shared_held: set = set()
        for allocation in allocations.values():
            for r in allocation["devices"].get("results", []):
                key = (r["driver"], r["pool"], r["device"])
                if r.get("adminAccess"):
                    continue
                if r.get("shareID"):
                    self.shared_held.add(key)
                    if r.get("consumedCapacity"):
                        for name, value in r["consumedCapacity"].items():
                            self.shared_sums[key][name] += exact(value)
                else:
                    self.dedicated.add(key)
