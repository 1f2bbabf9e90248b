"""What a simulated cluster came to, and how two such outcomes differ.

An :class:`Outcome` is a small summary of a settled :class:`ClusterState`: where each pod
runs (or why it waits), which devices each claim holds, how much of each driver and class
is allocated, the ProvisioningRequests' conditions and the nodes. :func:`diff` compares a
scenario's outcome with the baseline's, which is what a what-if view shows.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from allocation.engine.objects import Pod, ResourceClaim, ResourceClaimV1, ResourceSlice
from allocation.engine.v1.results import allocated_node_name
from allocation.engine.v1.usage import DeviceUsage

if TYPE_CHECKING:
    from allocation.engine.models.base import Inventory
    from allocation.engine.objects import ObjectKey
    from allocation.engine.state import ClusterState

__all__ = ["Outcome", "Diff", "summarize", "diff"]

@dataclass
class Outcome:
    """The facts of a settled state that a what-if comparison looks at."""

    pods: dict[str, str | None] = field(default_factory=dict)  # pod -> node or None
    reasons: dict[str, str] = field(default_factory=dict)  # pending pod -> message
    claims: dict[str, list[str]] = field(default_factory=dict)  # claim -> ["node/driver/id"]
    drivers: dict[str, tuple[int, int]] = field(default_factory=dict)  # driver -> (used, total)
    classes: dict[str, int] = field(default_factory=dict)  # class -> devices allocated
    requests: dict[str, dict[str, str]] = field(default_factory=dict)  # PR -> type: status
    nodes: list[str] = field(default_factory=list)


@dataclass
class Diff:
    """A scenario against the baseline; every list is sorted, empty when nothing differs."""

    newly_scheduled: list[dict] = field(default_factory=list)
    newly_pending: list[dict] = field(default_factory=list)
    moved_pods: list[dict] = field(default_factory=list)
    moved_claims: list[dict] = field(default_factory=list)
    drivers: list[dict] = field(default_factory=list)
    classes: list[dict] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    nodes_added: list[str] = field(default_factory=list)
    nodes_removed: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not any((self.newly_scheduled, self.newly_pending, self.moved_pods,
                        self.moved_claims, self.requests, self.nodes_added, self.nodes_removed))

    def to_dict(self) -> dict:
        return asdict(self)


def summarize(state: ClusterState, base: Outcome | None = None,
              changed: Collection[ObjectKey] = (),
              base_state: ClusterState | None = None) -> Outcome:
    """The outcome of a settled state.

    ``base``, when given, is the outcome of the state ``state`` was forked from, and
    ``changed`` the keys of every object the fork changed, added or removed since
    (``ClusterState.changed``): every other object is the very object ``base`` summarized,
    so only the pod, claim and request entries of ``changed`` are made again (a scenario
    changes a few objects of thousands, docs/scenarios.md). ``base_state``, given with
    them, is that state (settled, and never changed afterwards: it is only forked): the
    counts per class and driver are then its counts with those of the claims in
    ``changed`` and of the nodes whose inventories the fork replaced made again, not a
    walk of every claim and inventory; otherwise they are made again. The result equals a
    summary made afresh.

    Returns:
        The outcome.
    """
    if base is None:
        out = Outcome(nodes=list(state.node_order))
        for pod in state.pods():
            _pod_entry(out, pod)
        for claim in state.claims():
            _claim_entry(out, claim)
        for claim in state.of_kind(ResourceClaimV1):
            _claim_entry(out, claim)
        requests = (obj for obj in state.objects.values() if obj.kind == "ProvisioningRequest")
    else:
        out = Outcome(dict(base.pods), dict(base.reasons), dict(base.claims),
                      requests=dict(base.requests), nodes=list(state.node_order))
        requests = []
        for key in changed:
            ref = _ref(key)
            obj = state.objects.get(key)
            if key.kind == "Pod":
                out.pods.pop(ref, None)
                out.reasons.pop(ref, None)
                if obj is not None:
                    _pod_entry(out, obj)
            elif key.kind == "ResourceClaim":
                out.claims.pop(ref, None)
                if obj is not None:
                    _claim_entry(out, obj)
            elif key.kind == "ProvisioningRequest":
                out.requests.pop(ref, None)
                if obj is not None:
                    requests.append(obj)
    for obj in requests:
        status = obj.to_manifest().get("status") or {}
        out.requests[f"{obj.namespace}/{obj.name}"] = {
            c["type"]: f"{c.get('status')} ({c.get('reason', '')})"
            for c in status.get("conditions") or () if "type" in c}
    if base is not None and base_state is not None:
        counts = _fork_counts(state, base_state, changed)
    else:
        counts = _counts(state)
    classes = {name: devices for name, (devices, entries) in counts.classes.items() if entries}
    drivers: dict[str, list[int]] = {name: [used, total] for name, (used, total, entries)
                                     in counts.drivers.items() if entries}
    _v1_drivers(state, drivers, base_state if base is not None else None, changed)
    out.classes = classes
    out.drivers = {name: (used, total) for name, (used, total) in drivers.items()}
    return out


@dataclass
class _Counts:
    """A state's devices allocated per class (seed claims' picks, resource.k8s.io/v1
    claims' results) and its seed inventories' devices per driver, each with how many
    entries (claims, results, inventories) make it: a name is in the outcome while one
    does, as a walk of every object finds it, even when its count is 0."""

    classes: dict[str, list[int]] = field(default_factory=dict)  # class -> [devices, entries]
    drivers: dict[str, list[int]] = field(default_factory=dict)
    """driver -> [allocated, total, inventories]"""

    def copy(self) -> _Counts:
        return _Counts({k: list(v) for k, v in self.classes.items()},
                       {k: list(v) for k, v in self.drivers.items()})

    def claim(self, claim: ResourceClaim | ResourceClaimV1 | None, sign: int) -> None:
        """Count ``claim``'s allocated devices in (``sign`` 1) or out (-1)."""
        if claim is None or claim.allocation is None:
            return
        if isinstance(claim, ResourceClaimV1):
            for r in claim.results:
                row = self.classes.setdefault(_class_of(claim, r.get("request", "")), [0, 0])
                row[0] += sign
                row[1] += sign
            return
        row = self.classes.setdefault(claim.class_name, [0, 0])
        row[0] += sign * len(claim.allocation.picks)
        row[1] += sign

    def inventories(self, inventories: Iterable[Inventory], sign: int) -> None:
        """Count the devices of ``inventories`` in (``sign`` 1) or out (-1)."""
        for inventory in inventories:
            usage = inventory.usage()
            row = self.drivers.setdefault(inventory.driver_name, [0, 0, 0])
            row[0] += sign * usage.get("allocated", 0)
            row[1] += sign * usage.get("total", 0)
            row[2] += sign


_settled_counts: WeakKeyDictionary[ClusterState, _Counts] = WeakKeyDictionary()


def _counts(state: ClusterState) -> _Counts:
    """``state``'s counts, from every claim and inventory."""
    counts = _Counts()
    for claim in state.claims():
        counts.claim(claim, 1)
    for claim in state.of_kind(ResourceClaimV1):
        counts.claim(claim, 1)
    for inventories in state.inventories.values():
        counts.inventories(inventories, 1)
    return counts


def _fork_counts(state: ClusterState, base_state: ClusterState,
                 changed: Collection[ObjectKey]) -> _Counts:
    """The counts of ``state``, a fork of the settled ``base_state`` that changed
    ``changed``: ``base_state``'s (made once per state) with the changed claims, and the
    nodes whose inventory lists the fork replaced (copy-on-write: a fork shares a node's
    list, and every inventory in it, until it changes one), counted out and in again."""
    settled = _settled_counts.get(base_state)
    if settled is None:
        settled = _settled_counts[base_state] = _counts(base_state)
    counts = settled.copy()
    for key in changed:
        if key.kind == "ResourceClaim":  # seed and resource.k8s.io/v1 claims alike
            counts.claim(_claim(base_state, key), -1)
            counts.claim(_claim(state, key), 1)
    was, now = base_state.inventories, state.inventories
    for node in {*was, *now}:
        if now.get(node) is not was.get(node):
            counts.inventories(was.get(node, ()), -1)
            counts.inventories(now.get(node, ()), 1)
    return counts


def _claim(state: ClusterState, key: ObjectKey) -> ResourceClaim | ResourceClaimV1 | None:
    """The claim at ``key``, if ``state`` has one (what ``_counts`` walks)."""
    obj = state.objects.get(key)
    return obj if isinstance(obj, ResourceClaim | ResourceClaimV1) else None


def _ref(key: ObjectKey) -> str:
    """The name an object's entries go by in an :class:`Outcome`."""
    return f"{key.namespace}/{key.name}" if key.namespace else key.name


def _pod_entry(out: Outcome, pod: Pod) -> None:
    """Where ``pod`` runs, or why it waits."""
    ref = f"{pod.namespace}/{pod.name}"
    out.pods[ref] = pod.node_name
    if not pod.node_name and not pod.terminated:
        condition = pod.condition("PodScheduled") or {}
        out.reasons[ref] = condition.get("message") or "not scheduled yet"


def _claim_entry(out: Outcome, claim: ResourceClaim | ResourceClaimV1) -> None:
    """The devices an allocated claim holds: ``node/driver/id`` (a seed claim's picks, or
    its handles when a controller allocated it), ``node/driver/pool/device`` for a
    resource.k8s.io/v1 one (``*`` for a network-attached allocation)."""
    if claim.allocation is None:
        return
    if isinstance(claim, ResourceClaimV1):
        node = allocated_node_name(claim.allocation) or "*"
        out.claims[claim.ref] = sorted(f"{node}/{r['driver']}/{r['pool']}/{r['device']}"
                                       for r in claim.results)
        return
    held = sorted(f"{inventory.node_name}/{inventory.driver_name}/{candidate.id}"
                  for inventory, candidate in claim.allocation.picks)
    if not held:  # controller-managed: handles, not picks
        held = sorted(f"{claim.allocation.node_name or '*'}/{h.get('driverName', '')}/"
                      f"{json.dumps(h.get('data', ''))}" for h in claim.allocation.handles)
    out.claims[claim.ref] = held


def _class_of(claim: ResourceClaimV1, request: str) -> str:
    """The DeviceClass of a result's ``request`` (``req`` or ``req/sub``)."""
    name, _, sub = request.partition("/")
    for entry in claim.requests:
        if entry.name != name:
            continue
        if entry.exactly is not None:
            return entry.exactly.get("deviceClassName", "")
        return next((s.get("deviceClassName", "") for s in entry.first_available
                     if s.get("name") == sub), "")
    return ""


def _v1_drivers(state: ClusterState, drivers: dict[str, list[int]],
                base_state: ClusterState | None = None,
                changed: Collection[ObjectKey] = ()) -> None:
    """Add a driver's resource.k8s.io/v1 devices as ``v1.usage.driver_usage`` counts them
    (its ResourceSlices', in use by ``state``'s v1 claims). With ``base_state`` (the settled
    state ``state`` was forked from, ``changed`` what the fork changed): from that state's
    usage (made once per state) and the claims in ``changed``, unless a slice changed."""
    if base_state is not None and not any(k.kind == "ResourceSlice" for k in changed):
        settled = _settled_usage.get(base_state)
        if settled is None:
            settled = _settled_usage[base_state] = _usage(base_state)
        claims = [key for key in changed if key.kind == "ResourceClaim"]
        usage = settled.changed(_allocated([_claim(base_state, key) for key in claims]),
                                _allocated([_claim(state, key) for key in claims]))
    else:
        usage = _usage(state).totals
    for driver, (used, total) in usage.items():
        row = drivers.setdefault(driver, [0, 0])
        row[0] += used
        row[1] += total


_settled_usage: WeakKeyDictionary[ClusterState, DeviceUsage] = WeakKeyDictionary()


def _usage(state: ClusterState) -> DeviceUsage:
    """The v1 device usage of ``state``: every slice, every allocated v1 claim."""
    return DeviceUsage([s.raw for s in state.of_kind(ResourceSlice)],
                       _allocated(state.of_kind(ResourceClaimV1)))


def _allocated(claims: Iterable) -> list[dict]:
    """The allocations of the allocated v1 claims among ``claims`` as the documents'
    status holds them, read in place: a claim's whole manifest made for each of 40,000
    claims was most of a v1 drop."""
    return [{"status": {"allocation": c.allocation}} for c in claims
            if isinstance(c, ResourceClaimV1) and c.allocation is not None]


def diff(before: Outcome, after: Outcome,
         changed: Collection[ObjectKey] | None = None) -> Diff:
    """How ``after`` (a scenario) differs from ``before`` (its baseline).

    ``changed``, when given, are the keys of every object whose pod, claim or request entry
    may differ between the two: ``after`` was summarized from ``before`` with them
    (:func:`summarize`'s ``base`` and ``changed``), so every other entry is the same in
    both and only theirs are compared (a scenario changes a few pods of tens of thousands);
    the result equals the whole comparison.
    """
    if changed is None:
        pods = set(before.pods) | set(after.pods)
        claims = set(before.claims) | set(after.claims)
        requests = set(before.requests) | set(after.requests)
    else:
        refs: dict[str, set[str]] = defaultdict(set)
        for key in changed:
            refs[key.kind].add(_ref(key))
        pods, claims, requests = (refs["Pod"], refs["ResourceClaim"],
                                  refs["ProvisioningRequest"])
    result = Diff()
    for pod in sorted(pods):
        was, now = before.pods.get(pod), after.pods.get(pod)
        if now and not was:
            result.newly_scheduled.append({"pod": pod, "node": now})
        elif was and not now and pod in after.pods:
            result.newly_pending.append({"pod": pod, "was": was,
                                         "reason": after.reasons.get(pod, "")})
        elif was and now and was != now:
            result.moved_pods.append({"pod": pod, "from": was, "to": now})
        elif not was and not now and pod in after.reasons and pod not in before.pods:
            result.newly_pending.append({"pod": pod, "was": None,
                                         "reason": after.reasons[pod]})
    for claim in sorted(claims):
        was, now = before.claims.get(claim, []), after.claims.get(claim, [])
        if was != now:
            result.moved_claims.append({"claim": claim, "before": was, "after": now})
    for name in sorted(set(before.drivers) | set(after.drivers)):
        was, now = before.drivers.get(name, (0, 0)), after.drivers.get(name, (0, 0))
        result.drivers.append({"driver": name, "before": list(was), "after": list(now)})
    for name in sorted(set(before.classes) | set(after.classes)):
        result.classes.append({"class": name, "before": before.classes.get(name, 0),
                               "after": after.classes.get(name, 0)})
    for name in sorted(requests):
        was, now = before.requests.get(name, {}), after.requests.get(name, {})
        if was != now:
            result.requests.append({"request": name, "before": was, "after": now})
    result.nodes_added = sorted(set(after.nodes) - set(before.nodes))
    result.nodes_removed = sorted(set(before.nodes) - set(after.nodes))
    return result
