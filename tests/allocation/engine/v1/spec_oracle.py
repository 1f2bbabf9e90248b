"""The oracle's rules for one attempt (one node, one pod's claims), written from the spec
without the allocator's code (``test_oracle.py`` says how the oracle is used): the
per-device rules of a request (sections 3.3 steps 2-5, 3.5, 3.6), the rules over a list of
picks (in use, capacity, counters, constraints), an exhaustive search for an assignment
(:func:`exists`) and the check of the allocator's fit (:func:`check_fit`)."""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction

from allocation.engine.cel import CelEvaluationError
from allocation.engine.cel.device import compile_device_selector
from tests.allocation.engine.v1.random_clusters import CLASSES, Cluster
from tests.allocation.engine.v1.spec_devices import Book, Dev, exact, visible

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
        return (exact(policy["default"]) if policy and "default" in policy
                else exact(cap["value"])), False
    want = exact(asked)
    if not policy:
        return want, False
    rng, values = policy.get("validRange"), policy.get("validValues")
    if rng:
        low, step = exact(rng["min"]), exact(rng["step"]) if "step" in rng else None
        if want < low:
            want = low
        elif step:
            want = low + step * math.ceil((want - low) / step)
        bad = ("max" in rng and want > exact(rng["max"])) or bool(
            step and (want - low) % step)
        return want, bad
    for v in values or ():
        if want <= exact(v):
            return exact(v), False
    return want, bool(values)


class Rules:
    """The spec's rules for one attempt (one node, one pod's claims)."""

    def __init__(self, cluster: Cluster, node: dict, claims: list[dict],
                 allocations: dict[str, dict]) -> None:
        self.cluster = cluster
        self.profile = cluster.profile
        self.claims = claims
        self.devices, self.counter_sets, self.pool_devices, self.problems = visible(
            cluster, node)
        self.by_key = {d.key: d for d in self.devices}
        self.book = Book(allocations)
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
        # list-type attributes: matchAttribute's shared values narrow and never widen again
        # when the search takes a device back (upstream's quirk), so it may miss one
        if "lists" in self.cluster.uses and constraints:
            return False
        for dev in self.devices:
            if dev.raw.get("consumesCounters") and (
                    constraints or dev.raw.get("taints") or dev.multi):
                return False
        return True

    def selectable(self, body: dict, dev: Dev) -> bool:
        cls = body["deviceClassName"]
        if dev.raw.get("bindingConditions") and not self.profile.binding_and_status:
            return False
        exprs = [CLASSES[cls]] + [s["cel"]["expression"] for s in body.get("selectors") or ()]
        for expr in exprs:
            key = (expr, dev.key)
            if key not in self._cache:
                try:
                    sel = compile_device_selector(expr, **self.profile.selector_options)
                    self._cache[key] = sel.matches(dev.driver, dev.raw)
                except CelEvaluationError:
                    self.cel_error = True
                    self._cache[key] = False
            if not self._cache[key]:
                return False
        return True

    def capacity_ok(self, body: dict, dev: Dev) -> bool:
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
            if used > exact(cap["value"]):
                return False
        return True

    def static_ok(self, body: dict, dev: Dev) -> bool:
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

    def all_list(self, body: dict) -> list[Dev]:
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
                            cname, 0) > exact(cap["value"]):
                        return False
            if dev.raw.get("consumesCounters") and not (
                    is_multi and dev.key in capacity_in_use):
                pool = (dev.driver, dev.pool)
                for c in dev.raw["consumesCounters"]:
                    for cname, value in c["counters"].items():
                        counters[pool][(c["counterSet"], cname)] += exact(value["value"])
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
                        out[(c["counterSet"], cname)] -= exact(value["value"])
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
                if con.get("matchAttribute") and not _shared(values):
                    return False
        return True


def _attribute(dev: Dev, name: str):
    """(scalar type, set of values) of a device's attribute: a list type's items, a
    scalar's one value (spec: list-type attributes compare as sets)."""
    attrs = dev.raw.get("attributes") or {}
    found = attrs.get(name)
    domain, _, ident = name.partition("/")
    if found is None and domain == dev.driver:
        found = attrs.get(ident)
    if found is None:
        return None
    kind, value = next(iter(found.items()))
    if isinstance(value, list):
        return kind[:-1], frozenset(value)
    return kind, frozenset([value])


def _shared(values: list) -> bool:
    """Whether the devices' values have one in common, of one type (matchAttribute)."""
    if not values:
        return True
    kinds = {kind for kind, _ in values}
    return len(kinds) == 1 and bool(frozenset.intersection(*(v for _, v in values)))


def _bodies(request: dict) -> list[tuple[str, dict]]:
    if request.get("firstAvailable"):
        return [(f"{request['name']}/{s['name']}", s) for s in request["firstAvailable"]]
    return [(request["name"], request["exactly"])]


def exists(rules: Rules) -> bool:
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


def check_fit(rules: Rules, outcome) -> None:
    """Every rule of the spec holds for the allocator's fit."""
    picks = []
    for ci, (claim, allocation) in enumerate(zip(rules.claims, outcome.allocations,
                                                 strict=True)):
        chosen = {}
        for request in claim["spec"]["devices"].get("requests") or ():
            for name, body in _bodies(request):
                chosen[name] = body
        counted = defaultdict(int)
        for r in allocation["devices"].get("results", []):
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
