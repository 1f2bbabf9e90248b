"""Hypothesis properties of the v1 allocator over small random clusters (docs/v1.md).

Every successful allocation keeps devices exclusive (unless multi-allocatable), counters
non-negative, consumed capacity within capacity, and satisfies selectors and constraints;
a claim set fails on the node only when a brute-force oracle finds no allocation either.
Clusters avoid the combinations in which upstream leaks counters within a call (a device
refused after its counters were consumed), where first-fit can miss an allocation on
purpose.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allocation.engine.quantity import Quantity
from allocation.engine.simulation import simulate_files
from allocation.engine.v1 import Allocator
from allocation.engine.v1.constraints import lookup_attribute
from allocation.engine.v1.pools import Device
from allocation.engine.writer import dump
from tests.allocation.engine.v1.builders import (
    DRIVER,
    FakeSelector,
    allocator,
    claim,
    device_class,
    node,
    request,
    slice_,
)
from tests.allocation.engine.v1.random_clusters import Cluster, schedule
from tests.allocation.engine.v1.random_clusters import clusters as v1_clusters
from tests.factories import pod

SELECTORS = [f'device.attributes["{DRIVER}"].model == "a"',
             f'device.attributes["{DRIVER}"].numa == 0', "true"]
TOLERATION = [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]


@st.composite
def clusters(draw):
    mode = draw(st.sampled_from(["plain", "counters", "multi"]))
    n = draw(st.integers(1, 5))
    devices = []
    for i in range(n):
        d = {"name": f"d{i}", "attributes": {
            "model": {"string": draw(st.sampled_from("ab"))},
            "numa": {"int": draw(st.integers(0, 1))}}}
        if mode == "plain" and draw(st.booleans()) and draw(st.booleans()):
            d["taints"] = [{"key": "k", "value": "v", "effect": "NoSchedule"}]
        if mode == "counters":
            d["consumesCounters"] = [{"counterSet": "set", "counters": {
                "mem": {"value": str(draw(st.integers(1, 4)))}}}]
        if mode == "multi" and draw(st.booleans()):
            d["allowMultipleAllocations"] = True
            d["capacity"] = {"bw": {"value": str(draw(st.integers(1, 6)))}}
        devices.append(d)
    slices = [slice_("devices", devices, count=2 if mode == "counters" else 1)]
    if mode == "counters":
        slices.append(slice_("counters", [], count=2, pool="node-1", sharedCounters=[
            {"name": "set", "counters": {"mem": {"value": str(draw(st.integers(2, 8)))}}}]))
    claims = []
    slots = 0
    for c in range(draw(st.integers(1, 3))):
        reqs = []
        for r in range(draw(st.integers(1, 2))):
            count = draw(st.integers(1, 2))
            if slots + count > 4:
                break
            slots += count
            sels = draw(st.lists(st.sampled_from(SELECTORS), max_size=1))
            extra = {}
            if mode == "plain" and draw(st.booleans()):
                extra["tolerations"] = TOLERATION
            if mode == "multi" and draw(st.booleans()):
                extra["capacity"] = {"requests": {"bw": str(draw(st.integers(1, 3)))}}
            reqs.append(request(f"r{r}", "gpu", count, *sels, **extra))
        if not reqs:
            break
        constraints = None
        if mode == "plain" and draw(st.booleans()):
            attr = draw(st.sampled_from(["model", "numa"]))
            constraints = [{"matchAttribute": f"{DRIVER}/{attr}"}]
        claims.append(claim(f"c{c}", *reqs, constraints=constraints))
    return slices, claims


def _slots(claims):
    for ci, c in enumerate(claims):
        for req in c["spec"]["devices"]["requests"]:
            for k in range(req["exactly"]["count"]):
                yield ci, req, k


def _ok_device(dev: Device, req: dict) -> bool:
    sels = [DEVCLASS] + [s["cel"]["expression"] for s in req["exactly"].get("selectors", [])]
    if not all(FakeSelector(s).matches(dev.driver, dev.raw) for s in sels):
        return False
    if any(t["effect"] == "NoSchedule" for t in dev.taints) and not req["exactly"].get(
            "tolerations"):
        return False
    return all(name in dev.capacity for name in
               (req["exactly"].get("capacity") or {}).get("requests", {}))


DEVCLASS = f'device.driver == "{DRIVER}"'


def _consumed(dev: Device, req: dict) -> dict:
    asked = (req["exactly"].get("capacity") or {}).get("requests", {})
    return {n: Fraction(asked[n]) if n in asked else c.value for n, c in dev.capacity.items()}


def _feasible(claims, assign, slots, counters_total) -> bool:
    """The rules, order-free: exclusivity, one device per slot of a request, capacity,
    counters and constraints."""
    used = Counter(d.key for d in assign if not d.multi_raw)
    if any(v > 1 for v in used.values()):
        return False
    per_request = defaultdict(list)
    caps = defaultdict(lambda: defaultdict(Fraction))
    counters = defaultdict(Fraction)
    for dev, (ci, req, _k) in zip(assign, slots, strict=True):
        per_request[(ci, req["name"])].append(dev.key)
        if dev.multi_raw:
            for n, v in _consumed(dev, req).items():
                caps[dev.key][n] += v
        elif any(Fraction(v) > dev.capacity[n].value for n, v in
                 ((req["exactly"].get("capacity") or {}).get("requests") or {}).items()):
            return False
        for _set, cs in dev.consumes:
            for n, v in cs.items():
                counters[n] += v
    if any(len(set(v)) != len(v) for v in per_request.values()):
        return False
    for key, sums in caps.items():
        dev = next(d for d in assign if d.key == key)
        if any(v > dev.capacity[n].value for n, v in sums.items()):
            return False
    if counters_total is not None and counters.get("mem", 0) > counters_total:
        return False
    by_claim = defaultdict(list)
    for dev, (ci, _req, _k) in zip(assign, slots, strict=True):
        by_claim[ci].append(dev)
    return all(_constraints_hold(c, by_claim[ci]) for ci, c in enumerate(claims))


def _constraints_hold(c: dict, devs: list) -> bool:
    for con in c["spec"]["devices"].get("constraints") or ():
        values = {lookup_attribute(d, con["matchAttribute"]) for d in devs}
        if None in values or len(values) > 1:
            return False
    return True


def _oracle(a, claims, counters_total) -> bool:
    pools = a.pools_for(node())
    devices = [d for p in pools if p.usable for v in p.slices for d in v.devices]
    slots = list(_slots(claims))
    options = [[d for d in devices if _ok_device(d, req)] for _ci, req, _k in slots]
    return any(_feasible(claims, assign, slots, counters_total)
               for assign in itertools.product(*options))


def _results(out, a):
    devs = {d.key: d for p in a.pools_for(node()) for v in p.slices for d in v.devices}
    for ci, alloc in enumerate(out.allocations):
        for r in alloc["devices"].get("results", []):
            yield ci, r, devs[(r["driver"], r["pool"], r["device"])]


@settings(max_examples=100, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_allocations_are_valid_and_complete(cluster):
    slices, claims = cluster
    a = allocator(slices, [device_class()])
    out = a.allocate(node(), claims)
    counters_total = None
    for s in slices:
        for cs in s["spec"].get("sharedCounters") or ():
            counters_total = Fraction(cs["counters"]["mem"]["value"])
    if not out.fits:
        assert not _oracle(a, claims, counters_total), "the oracle found an allocation"
        return
    taken = Counter()
    caps = defaultdict(lambda: defaultdict(Fraction))
    mem = Fraction(0)
    per_claim = defaultdict(list)
    for ci, r, dev in _results(out, a):
        req = next(q for q in claims[ci]["spec"]["devices"]["requests"]
                   if q["name"] == r["request"])
        assert _ok_device(dev, req)
        per_claim[ci].append(dev)
        if dev.multi_raw:
            for n, v in r["consumedCapacity"].items():
                caps[dev.key][n] += Quantity.parse(v).value
        else:
            taken[dev.key] += 1
        for _set, cs in dev.consumes:
            mem += cs["mem"]
    assert all(v == 1 for v in taken.values())
    for key, sums in caps.items():
        dev = next(d for _ci, _r, d in _results(out, a) if d.key == key)
        assert all(v <= dev.capacity[n].value for n, v in sums.items())
    if counters_total is not None:
        assert mem <= counters_total
    for ci, devs in per_claim.items():
        assert _constraints_hold(claims[ci], devs)


@settings(max_examples=80, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.sampled_from(["1.35", "1.36"]), st.lists(st.booleans(), max_size=6))
def test_committed_state_stays_within_capacities_and_counters(cluster, release, releases):
    slices, claims = cluster
    gates = ("DRAPartitionableDevices=true,DRAConsumableCapacity=true,DRADeviceTaints=true"
             if release == "1.35" else "")
    a = allocator(slices, [device_class()], release=release, gates=gates)
    live = []
    for i, drop in enumerate(releases * 2 or [False]):
        if drop and live:
            a.release(live.pop(0))
            continue
        c = dict(claims[i % len(claims)])
        c["metadata"] = dict(c["metadata"], name=f"n{i}", uid=f"u{i}")
        out = a.allocate(node(), [c])
        if out.fits:
            a.commit(c, out.allocations[0])
            live.append(c)
    devices = {d.key: d for p in a.pools_for(node()) for v in p.slices for d in v.devices}
    for key, sums in a.book.shared.items():
        assert all(v <= devices[key].capacity[n].value for n, v in sums.items())
    for s in slices:
        for cs in s["spec"].get("sharedCounters") or ():
            total = Fraction(cs["counters"]["mem"]["value"])
            used = sum((dev.consumes[0][1]["mem"] for key, dev in devices.items()
                        if dev.consumes and (key in a.book.dedicated or key in a.book.shared)),
                       Fraction(0))
            assert used <= total


# -- scheduling random clusters (random_clusters.py) --

SCHEDULING = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
PROFILES = st.sampled_from([("1.36", ""), ("1.36", "AllAlpha=true"), ("1.35", ""),
                            ("1.35", "AllAlpha=true"), ("1.34", ""), ("1.34", "AllAlpha=true")])


def _scheduled(cluster: Cluster):
    alloc = Allocator(cluster.profile, slices=cluster.slices, classes=cluster.classes)
    return schedule(alloc, cluster.nodes, cluster.pods)


def _devices(cluster: Cluster) -> dict:
    """Every device of the newest generation of each pool, by (driver, pool, name)."""
    newest = {}
    for s in cluster.slices:
        pool = (s["spec"]["driver"], s["spec"]["pool"]["name"])
        newest[pool] = max(newest.get(pool, 0), s["spec"]["pool"]["generation"])
    return {(s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"]): d
            for s in cluster.slices for d in s["spec"].get("devices") or ()
            if s["spec"]["pool"]["generation"] == newest[(s["spec"]["driver"],
                                                          s["spec"]["pool"]["name"])]}


@SCHEDULING
@given(st.data())
def test_committed_allocations_never_overbook(data):
    """Over every committed allocation: a device is in at most one non-admin result unless
    it allows multiple allocations (consumable capacity on); shared results never consume
    more than a capacity; shared counters never go below zero. Counters count every
    allocated device in 1.36 (IsDeviceAllocated) and dedicated ones before (spec 3.4)."""
    release, gates = data.draw(PROFILES)
    cluster = data.draw(v1_clusters(release, gates))
    trace = _scheduled(cluster)
    profile = cluster.profile
    devices = _devices(cluster)
    holders = Counter()
    consumed = defaultdict(lambda: defaultdict(Fraction))
    allocated = set()
    for allocation in trace.allocations.values():
        for r in allocation["devices"].get("results", []):
            key = (r["driver"], r["pool"], r["device"])
            raw = devices[key]
            if r.get("adminAccess"):
                continue
            if r.get("shareID"):
                assert profile.consumable_capacity and raw.get("allowMultipleAllocations")
                for name, value in (r.get("consumedCapacity") or {}).items():
                    consumed[key][name] += Quantity.parse(value).value
                if profile.counters_count_shared:
                    allocated.add(key)
            else:
                holders[key] += 1
                allocated.add(key)
    assert all(n == 1 for n in holders.values()), holders
    for key, sums in consumed.items():
        caps = devices[key]["capacity"]
        assert all(v <= Quantity.parse(caps[n]["value"]).value for n, v in sums.items())
    if profile.legacy_pools:
        return  # [1.34] counters are local to their slice
    for s in cluster.slices:
        for cs in s["spec"].get("sharedCounters") or ():
            pool = (s["spec"]["driver"], s["spec"]["pool"]["name"])
            for counter, value in cs["counters"].items():
                used = sum((Quantity.parse(c["counters"][counter]["value"]).value
                            for key in allocated if key[:2] == pool
                            for c in devices[key].get("consumesCounters") or ()
                            if c["counterSet"] == cs["name"] and counter in c["counters"]),
                           Fraction(0))
                assert used <= Quantity.parse(value["value"]).value, (pool, counter)


@SCHEDULING
@given(st.data())
def test_scheduling_is_deterministic_and_raises_only_allocation_errors(data):
    """Every profile, 1.34 included: the same cluster gives the same placements and
    allocations twice; nothing but AllocationError (caught by ``schedule``) escapes."""
    release, gates = data.draw(PROFILES)
    cluster = data.draw(v1_clusters(release, gates))
    first, second = _scheduled(cluster), _scheduled(cluster)
    assert first.placements == second.placements
    assert first.attempts == second.attempts
    assert first.allocations == second.allocations


def _documents(cluster: Cluster) -> list[dict]:
    docs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "default", "labels": {"resource.kubernetes.io/admin-access": "true"}}}]
    for n in cluster.nodes:
        docs.append({**n, "status": {"allocatable": {"cpu": "8", "memory": "32Gi",
                                                     "pods": "110"}}})
    docs += cluster.slices + cluster.classes
    for pi, claims in enumerate(cluster.pods):
        docs += claims
        docs.append(pod(f"pod-{pi}", claims={f"c{i}": c["metadata"]["name"]
                                             for i, c in enumerate(claims)}))
    return docs


@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(v1_clusters("1.36"))
def test_simulate_files_on_random_clusters_never_fails_and_is_deterministic(cluster):
    """``simulate`` (default profile, 1.36) on a random valid v1 cluster file: no
    exception, the same output text twice, and the pods where the allocator's own
    node-by-node loop puts them (a pod waiting there for binding conditions, spec 3.8, is
    nominated to that node rather than bound)."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cluster.yaml"
        path.write_text(dump({"apiVersion": "v1", "kind": "List",
                              "items": _documents(cluster)}, "yaml"))
        first = simulate_files([str(path)], output="json")
        assert first == simulate_files([str(path)], output="json")
    items = json.loads(first)["items"]
    placed = {i["metadata"]["name"]: i["spec"].get("nodeName")
              or i.get("status", {}).get("nominatedNodeName") for i in items
              if i["kind"] == "Pod"}
    assert [placed[f"pod-{i}"] for i in range(len(cluster.pods))] == _scheduled(
        cluster).placements
