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
from collections import Counter, defaultdict
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allocation.engine.quantity import Quantity
from allocation.engine.v1.constraints import lookup_attribute
from allocation.engine.v1.pools import Device
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
        for r in alloc["devices"]["results"]:
            yield ci, r, devs[(r["driver"], r["pool"], r["device"])]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
