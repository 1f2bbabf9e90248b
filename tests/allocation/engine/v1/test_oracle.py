"""The v1 allocator against a brute-force oracle written from the spec (section 3).

Random small clusters (``random_clusters``) are scheduled as the planner's scheduler does
(nodes in name order, each fit committed). For every node tried:

- a fit must obey every rule of spec section 3, checked here from the spec text without the
  allocator's code: visible pools (3.2), selectors, taints (3.6), the "in use" rules with
  admin access (3.3 step 1, 3.7), one device per slot of a request (3.12: a
  multi-allocatable device may fill two slots of one request only before 1.36), capacity
  (3.5), counters (3.4), matchAttribute, and an ``All`` request taking exactly its listed
  devices;
- a "does not fit" (not a fatal error) must be confirmed by the oracle: an independent
  depth-first enumeration of every assignment (a choice of subrequest per request and of
  devices per slot) finds none on that node.

Upstream's search is exhaustive, so the two agree except where the spec says upstream may
miss an assignment on purpose; the oracle comparison is skipped for those clusters:
``All`` requests (a fixed device list, the first failure ends the request),
distinctAttribute (it forgets values: 3.3, 3.12), and shared counters together with taints,
constraints or multi-allocatable devices (counters stay consumed after a taint or
constraint refusal, and multi-allocatable devices never give theirs back on backtracking:
docs/v1.md "Where the planner knowingly follows upstream's bugs"). Fits are checked in
every cluster (distinctAttribute only for the attribute's presence). Per-device node
selection is part of the clusters: a device of such a slice is usable only on its node.
Release 1.34 (legacy pools) is only run for crashes and determinism, in
``test_properties``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction

from hypothesis import HealthCheck, given, settings

from allocation.engine.cel import CelEvaluationError
from allocation.engine.cel.device import compile_device_selector
from allocation.engine.labels import node_selector_matches
from allocation.engine.quantity import Quantity
from allocation.engine.v1 import Allocator
from allocation.engine.v1.pools import node_view
from tests.allocation.engine.v1.random_clusters import CLASSES, Cluster, clusters, schedule

SETTINGS = settings(max_examples=80, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.data_too_large])


def _q(text) -> Fraction:
    return Quantity.parse(str(text)).value


# -- the cluster as the spec describes it (section 3.2) --

class _Dev:
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


def _visible(cluster: Cluster, node: dict):
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
                sets[cs["name"]] = {n: _q(c["value"]) for n, c in cs["counters"].items()}
        counter_sets[key] = sets
        pool_devices[key] = [(s, d) for s in same for d in s["spec"].get("devices") or ()]
        for s in sorted(kept, key=lambda s: s["metadata"]["name"]):
            for d in s["spec"].get("devices") or ():
                if not s["spec"].get("perDeviceNodeSelection") or _node_match(node, d):
                    devices.append(_Dev(len(devices), s, d))
    return devices, counter_sets, pool_devices, problems


# -- the state before the attempt, from the committed allocations (section 3.1) --

class _Book:
    def __init__(self, allocations: dict[str, dict]) -> None:
        self.dedicated: set = set()
        self.shared_sums: dict = defaultdict(lambda: defaultdict(Fraction))
        self.shared_held: set = set()
        for allocation in allocations.values():
            for r in allocation["devices"]["results"]:
                key = (r["driver"], r["pool"], r["device"])
                if r.get("adminAccess"):
                    continue
                if r.get("shareID"):
                    self.shared_held.add(key)
                    if r.get("consumedCapacity"):
                        for name, value in r["consumedCapacity"].items():
                            self.shared_sums[key][name] += _q(value)
                else:
                    self.dedicated.add(key)


# -- per-device rules of one request (sections 3.3 steps 2-5, 3.5, 3.6) --

def _tolerated(taint: dict, tolerations) -> bool:
    for t in tolerations or ():
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("key") and t["key"] != taint["key"]:
            continue
        if t.get("operator", "Equal") == "Exists" or t.get("value", "") == taint.get(
                "value", ""):
            return True
    return False


def _consumed(body: dict, cap: dict, name: str) -> tuple[Fraction, bool]:
    """(amount consumed of capacity ``name``, whether it violates the policy)."""
    asked = ((body.get("capacity") or {}).get("requests") or {}).get(name)
    policy = cap.get("requestPolicy")
    if asked is None:
        return (_q(policy["default"]) if policy and "default" in policy
                else _q(cap["value"])), False
    want = _q(asked)
    if not policy:
        return want, False
    rng, values = policy.get("validRange"), policy.get("validValues")
    if rng:
        low, step = _q(rng["min"]), _q(rng["step"]) if "step" in rng else None
        if want < low:
            want = low
        elif step:
            want = low + step * math.ceil((want - low) / step)
        bad = ("max" in rng and want > _q(rng["max"])) or bool(
            step and (want - low) % step)
        return want, bad
    for v in values or ():
        if want <= _q(v):
            return _q(v), False
    return want, bool(values)


class _Rules:
    """The spec's rules for one attempt (one node, one pod's claims)."""

    def __init__(self, cluster: Cluster, node: dict, claims: list[dict],
                 allocations: dict[str, dict]) -> None:
        self.cluster = cluster
        self.profile = cluster.profile
        self.claims = claims
        self.devices, self.counter_sets, self.pool_devices, self.problems = _visible(
            cluster, node)
        self.by_key = {d.key: d for d in self.devices}
        self.book = _Book(allocations)
        self.cel_error = False
        self._cache: dict = {}

    def oracle_applies(self) -> bool:
        """Whether upstream's search must find an assignment when one exists: no ``All``
        request, no distinctAttribute, and no visible counter-consuming device that a
        taint, a constraint or multiple allocations can make leak its counters."""
        bodies = [b for c in self.claims for q in c["spec"]["devices"].get("requests") or ()
                  for _n, b in _bodies(q)]
        constraints = [con for c in self.claims
                       for con in c["spec"]["devices"].get("constraints") or ()]
        if any(b.get("allocationMode") == "All" for b in bodies) or any(
                "distinctAttribute" in con for con in constraints):
            return False
        for dev in self.devices:
            if dev.raw.get("consumesCounters") and (
                    constraints or dev.raw.get("taints") or dev.multi):
                return False
        return True

    def selectable(self, body: dict, dev: _Dev) -> bool:
        cls = body["deviceClassName"]
        if dev.raw.get("bindingConditions") and not self.profile.binding_and_status:
            return False
        exprs = [CLASSES[cls]] + [s["cel"]["expression"] for s in body.get("selectors") or ()]
        for expr in exprs:
            key = (expr, dev.key)
            if key not in self._cache:
                try:
                    sel = compile_device_selector(
                        expr, consumable_capacity=self.profile.consumable_capacity)
                    self._cache[key] = sel.matches(dev.driver, dev.raw)
                except CelEvaluationError:
                    self.cel_error = True
                    self._cache[key] = False
            if not self._cache[key]:
                return False
        return True

    def capacity_ok(self, body: dict, dev: _Dev) -> bool:
        if not self.profile.consumable_capacity:
            return True
        caps = dev.raw.get("capacity") or {}
        if any(n not in caps for n in ((body.get("capacity") or {}).get("requests") or {})):
            return False
        for name, cap in caps.items():
            want, bad = _consumed(body, cap, name)
            if bad:
                return False
            used = want + (self.book.shared_sums.get(dev.key, {}).get(name, 0)
                           if dev.multi else 0)
            if used > _q(cap["value"]):
                return False
        return True

    def static_ok(self, body: dict, dev: _Dev) -> bool:
        if not self.selectable(body, dev):
            return False
        if self.profile.device_taints and any(
                t["effect"] in ("NoSchedule", "NoExecute")
                and not _tolerated(t, body.get("tolerations")) for t in
                dev.raw.get("taints") or ()):
            return False
        if dev.raw.get("consumesCounters") and not self.profile.partitionable_devices:
            return False
        return self.capacity_ok(body, dev)

    def all_list(self, body: dict) -> list[_Dev]:
        return [d for d in self.devices if self.selectable(body, d) and self.capacity_ok(body, d)]

    # -- rules over a list of picks (claim index, result name, body, device), in order --
    def picks_ok(self, picks: list) -> bool:
        multi = self.profile.consumable_capacity
        held: dict = defaultdict(list)  # device -> [(claim, admin)]
        in_request: dict = defaultdict(list)
        caps: dict = defaultdict(lambda: defaultdict(Fraction))
        counters: dict = defaultdict(lambda: defaultdict(Fraction))
        capacity_in_use = set(self.book.shared_sums)
        for ci, name, body, dev in picks:
            admin = bool(body.get("adminAccess"))
            is_multi = multi and dev.multi
            if not is_multi:
                earlier = held[dev.key]
                if admin and any(c == ci for c, _a in earlier):
                    return False
                if not admin and (earlier or dev.key in self.book.dedicated):
                    return False
            elif self.profile.combinations and dev.key in in_request[(ci, name)]:
                return False
            held[dev.key].append((ci, admin))
            in_request[(ci, name)].append(dev.key)
            if is_multi:
                for cname, cap in (dev.raw.get("capacity") or {}).items():
                    caps[dev.key][cname] += _consumed(body, cap, cname)[0]
                    if caps[dev.key][cname] + self.book.shared_sums.get(dev.key, {}).get(
                            cname, 0) > _q(cap["value"]):
                        return False
            if dev.raw.get("consumesCounters") and not (
                    is_multi and dev.key in capacity_in_use):
                pool = (dev.driver, dev.pool)
                for c in dev.raw["consumesCounters"]:
                    for cname, value in c["counters"].items():
                        counters[pool][(c["counterSet"], cname)] += _q(value["value"])
                avail = self._available(pool)
                if any(value < counters[pool][k] for k, value in avail.items()):
                    return False
            if is_multi:
                capacity_in_use.add(dev.key)
        return self._constraints_ok(picks)

    def _available(self, pool) -> dict:
        out = {(s, n): v for s, cs in self.counter_sets.get(pool, {}).items()
               for n, v in cs.items()}
        taken = self.book.dedicated | (self.book.shared_held if self.profile.release != "1.35"
                                       else set())
        for slice_, d in self.pool_devices.get(pool, ()):
            if (slice_["spec"]["driver"], slice_["spec"]["pool"]["name"], d["name"]) in taken:
                for c in d.get("consumesCounters") or ():
                    for cname, value in c["counters"].items():
                        out[(c["counterSet"], cname)] -= _q(value["value"])
        return out

    def _constraints_ok(self, picks) -> bool:
        for ci, claim in enumerate(self.claims):
            for con in claim["spec"]["devices"].get("constraints") or ():
                attr = con.get("matchAttribute") or con.get("distinctAttribute")
                names = con.get("requests") or []
                values = []
                for cj, name, _body, dev in picks:
                    if cj != ci:
                        continue
                    if names and name not in names and name.split("/")[0] not in names:
                        continue
                    value = _attribute(dev, attr)
                    if value is None:
                        return False
                    values.append(value)
                if con.get("matchAttribute") and len(set(values)) > 1:
                    return False
        return True


def _attribute(dev: _Dev, name: str):
    attrs = dev.raw.get("attributes") or {}
    found = attrs.get(name)
    domain, _, ident = name.partition("/")
    if found is None and domain == dev.driver:
        found = attrs.get(ident)
    return None if found is None else next(iter(found.items()))


def _bodies(request: dict) -> list[tuple[str, dict]]:
    if request.get("firstAvailable"):
        return [(f"{request['name']}/{s['name']}", s) for s in request["firstAvailable"]]
    return [(request["name"], request["exactly"])]


def _exists(rules: _Rules) -> bool:
    """Whether any assignment obeys every rule (depth-first, claim by claim)."""
    slots = []  # per request: its alternatives
    for ci, claim in enumerate(rules.claims):
        for request in claim["spec"]["devices"].get("requests") or ():
            slots.append((ci, _bodies(request)))
    candidates = {}

    def cands(body):
        key = id(body)
        if key not in candidates:
            candidates[key] = [d for d in rules.devices if rules.static_ok(body, d)]
        return candidates[key]

    def request(i, picks) -> bool:
        if i == len(slots):
            return True
        ci, alternatives = slots[i]
        for name, body in alternatives:
            if fill(i, ci, name, body, body.get("count", 1), 0, picks):
                return True
        return False

    def fill(i, ci, name, body, left, start, picks) -> bool:
        if left == 0:
            return request(i + 1, picks)
        for dev in cands(body)[start:]:
            nxt = picks + [(ci, name, body, dev)]
            if not rules.picks_ok(nxt):
                continue
            pos = cands(body).index(dev)
            again = rules.profile.consumable_capacity and dev.multi \
                and not rules.profile.combinations
            if fill(i, ci, name, body, left - 1, pos if again else pos + 1, nxt):
                return True
        return False

    return request(0, [])


def _check_fit(rules: _Rules, outcome) -> None:
    """Every rule of the spec holds for the allocator's fit."""
    picks = []
    for ci, (claim, allocation) in enumerate(zip(rules.claims, outcome.allocations,
                                                 strict=True)):
        chosen = {}
        for request in claim["spec"]["devices"].get("requests") or ():
            for name, body in _bodies(request):
                chosen[name] = body
        counted = defaultdict(int)
        for r in allocation["devices"]["results"]:
            dev = rules.by_key.get((r["driver"], r["pool"], r["device"]))
            assert dev is not None, f"{r} is not a usable device on the node"
            body = chosen[r["request"]]
            assert bool(r.get("adminAccess")) == bool(body.get("adminAccess"))
            assert rules.static_ok(body, dev), f"{r} breaks a per-device rule"
            counted[r["request"]] += 1
            picks.append((ci, r["request"], body, dev))
        for name, n in counted.items():
            body = chosen[name]
            if body.get("allocationMode") == "All":
                if "/" in name and not name.endswith("/s0") and rules.profile.all_subrequest_bug:
                    continue
                assert sorted(d.key for c, nm, _b, d in picks if c == ci and nm == name) == \
                    sorted(d.key for d in rules.all_list(body))
            else:
                assert n == body["count"], (name, n)
        bases = {name.split("/")[0] for name in counted}
        asked = {q["name"] for q in claim["spec"]["devices"].get("requests") or ()}
        assert bases == asked, (bases, asked)
    assert rules.picks_ok(picks), "the fit breaks an in-use, capacity, counter or " \
                                  "constraint rule"


def _run(cluster: Cluster) -> tuple[int, int]:
    alloc = Allocator(cluster.profile, slices=cluster.slices, classes=cluster.classes)
    compared = [0, 0]

    def on_attempt(node, claims, outcome, committed):
        if isinstance(outcome, Exception):
            return
        rules = _Rules(cluster, node, claims, committed)
        if outcome.fits:
            _check_fit(rules, outcome)
            compared[0] += 1
            return
        if rules.oracle_applies():
            found = _exists(rules)
            if not rules.cel_error:
                assert not found, "the oracle found an allocation the allocator missed"
                compared[1] += 1

    schedule(alloc, cluster.nodes, cluster.pods, on_attempt)
    return compared[0], compared[1]


@SETTINGS
@given(clusters("1.36"))
def test_136_fits_obey_the_spec_and_misses_are_confirmed(cluster):
    _run(cluster)


@SETTINGS
@given(clusters("1.35"))
def test_135_default_fits_obey_the_spec_and_misses_are_confirmed(cluster):
    _run(cluster)


@SETTINGS
@given(clusters("1.35", "AllAlpha=true"))
def test_135_all_alpha_fits_obey_the_spec_and_misses_are_confirmed(cluster):
    _run(cluster)
