"""Visible resource pools of one node, built from every ResourceSlice (docs/v1.md, pools).

Slices are indexed once (``SliceIndex``); ``SliceIndex.pools_for(node)`` gathers, per node,
the pools the allocator may use: the highest generation, completeness, invalid pools, and the
planner's sorted order (driver, pool; slices by name). Results are cached per node and the
whole index is rebuilt when the slices change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from types import SimpleNamespace

from allocation.engine.labels import node_selector_matches
from allocation.engine.v1.devices import Device, quantity_value
from allocation.engine.v1.features import Profile

__all__ = ["Device", "Pool", "SliceIndex", "node_view", "quantity_value"]


def node_view(node: dict) -> SimpleNamespace:
    """The shape ``labels.node_selector_matches`` reads, from a v1 Node dict."""
    meta = node.get("metadata") or {}
    return SimpleNamespace(name=meta.get("name", ""),
                           meta=SimpleNamespace(labels=meta.get("labels") or {}))


@dataclass
class SliceView:
    """A slice as one node sees it: its devices, and for per-device node selection which
    of them target the node."""

    raw: dict
    devices: list[Device]
    per_device: bool
    node_ok: frozenset[str] | None = None  # per-device slices: device names on the node

    @property
    def name(self) -> str:
        return self.raw.get("metadata", {}).get("name", "")


@dataclass
class Pool:
    """One pool visible on a node."""

    driver: str
    name: str
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    slices: list[SliceView] = field(default_factory=list)
    other_slices: list[SliceView] = field(default_factory=list)
    counter_sets: dict[str, dict[str, Fraction]] = field(default_factory=dict)
    # (book, its version of the pool, counter availability then): see counters.py
    counter_cache: tuple | None = None
    fully_visible: bool = False  # every device of the pool is on the node
    multi: bool = False  # some device allows multiple allocations
    device_count: int = 0

    @property
    def key(self) -> tuple[str, str]:
        return (self.driver, self.name)

    @property
    def usable(self) -> bool:
        return not (self.incomplete or self.invalid)

    def serves_exact_count(self, profile) -> bool:
        """Whether the search looks into this pool for an ExactCount request: a usable
        pool, or [1.34] an incomplete one (``Profile.incomplete_pools_for_exact_count``).
        The search's own loop tests the same inline."""
        return not (self.invalid or (self.incomplete
                                     and not profile.incomplete_pools_for_exact_count))


def _node_matches(node, name: str, all_nodes: bool, selector: dict | None) -> bool:
    if name:
        return node.name == name
    if all_nodes:
        return True
    if selector is not None:
        return node_selector_matches(selector, node)
    return False


def _devices_on(node, spec: dict) -> frozenset[str]:
    """Names of the devices of a per-device-node-selection slice that ``node`` may use."""
    return frozenset(d["name"] for d in spec.get("devices") or ()
                     if _node_matches(node, d.get("nodeName") or "", bool(d.get("allNodes")),
                                      d.get("nodeSelector")))


def _on_node(spec: dict) -> bool:
    """A slice of one node's own (1.36 ``NewAllocator``: ``slicesOnNode``); a counter slice
    is needed on every node, whatever its node fields (``slicesShared``; 1.35 GatherPools
    reads every slice)."""
    return bool(spec.get("nodeName")) and not spec.get("sharedCounters")


def _keep_newest(groups: dict, slice_: dict, node_ok: frozenset | None) -> None:
    """Group ``slice_`` by (driver, pool), keeping only the newest generation seen (§3.2)."""
    spec = slice_["spec"]
    pid = (spec["driver"], spec["pool"]["name"])
    kept = groups.get(pid)
    gen = spec["pool"].get("generation", 0)
    newest = kept[0][0]["spec"]["pool"].get("generation", 0) if kept else None
    if kept is None or gen > newest:
        groups[pid] = [(slice_, node_ok)]
    elif gen == newest:
        kept.append((slice_, node_ok))


class SliceIndex:
    """Every ResourceSlice of the cluster, indexed for ``pools_for``."""

    def __init__(self, slices: list[dict], profile: Profile) -> None:
        self.profile = profile
        self.slices = list(slices)
        self._by_pool: dict[tuple[str, str], list[dict]] = {}
        self._devices: dict[int, list[Device]] = {}
        self._by_node: dict[str, list[dict]] = {}
        self._shared: list[dict] = []
        for s in self.slices:
            spec = s["spec"]
            key = (spec["driver"], spec["pool"]["name"])
            self._by_pool.setdefault(key, []).append(s)
            if _on_node(spec):
                self._by_node.setdefault(spec["nodeName"], []).append(s)
            else:
                self._shared.append(s)
        self._cache: dict[tuple, list[Pool]] = {}
        self._last: dict[str, tuple[dict, list[Pool]]] = {}

    def updated(self, slices: list[dict]) -> SliceIndex:
        """The index of ``slices`` (the same profile), reusing what this one holds for the
        slice dicts it already had (by identity: a changed slice is another dict).

        Parsed devices are kept for every slice dict in both; a node's pools are kept when
        no added or removed slice can change them: that slice names another node and its
        pool is only on named nodes (a node reads its own slices, the shared ones and, for
        completeness, every slice of the pools it sees). Any other change starts afresh.

        Returns:
            A new index; this one is not changed (a fork of the state may still use it).
        """
        fresh = SliceIndex(slices, self.profile)
        had = {id(s): s for s in self.slices}
        now = {id(s) for s in fresh.slices}
        for s in fresh.slices:
            if had.get(id(s)) is s and id(s) in self._devices:
                fresh._devices[id(s)] = self._devices[id(s)]
        changed = [s for s in self.slices if id(s) not in now]
        changed += [s for s in fresh.slices if had.get(id(s)) is not s]
        pids = {(s["spec"]["driver"], s["spec"]["pool"]["name"]) for s in changed}
        if any((s["spec"]["driver"], s["spec"]["pool"]["name"]) in pids
               for s in [*self._shared, *fresh._shared]):
            return fresh  # a pool every node may read changed: gather every node again
        touched = {s["spec"]["nodeName"] for index in (self, fresh) for pid in pids
                   for s in index._by_pool.get(pid, ())}
        fresh._cache = {key: pools for key, pools in self._cache.items()
                        if key[0] not in touched}
        fresh._last = {name: last for name, last in self._last.items() if name not in touched}
        return fresh

    def devices(self, slice_: dict) -> list[Device]:
        """The parsed devices of ``slice_`` (cached)."""
        found = self._devices.get(id(slice_))
        if found is None:
            found = [Device(d, slice_) for d in slice_["spec"].get("devices") or ()]
            self._devices[id(slice_)] = found
        return found

    def pools_for(self, node: dict) -> list[Pool]:
        """The pools visible on ``node``, in the planner's order (cached per node)."""
        meta = node.get("metadata") or {}
        labels = meta.get("labels") or {}
        # the last answer per node name, while its labels are unchanged (one lookup per
        # call instead of sorting the labels; the scheduler asks once per pod and node)
        last = self._last.get(meta.get("name", ""))
        if last is not None and last[0] == labels:
            return last[1]
        view = node_view(node)
        key = (view.name, tuple(sorted(view.meta.labels.items())))
        found = self._cache.get(key)
        if found is None:
            found = self._gather(view)
            self._cache[key] = found
        self._last[view.name] = (dict(labels), found)
        return found

    def _gather(self, node) -> list[Pool]:
        if self.profile.legacy_pools:
            return self._gather_134(node)
        partitionable = self.profile.partitionable_devices
        groups: dict[tuple[str, str], list[tuple[dict, frozenset | None]]] = {}
        for s in self._by_node.get(node.name, []) + self._shared:
            spec = s["spec"]
            if not partitionable and (spec.get("perDeviceNodeSelection") is not None
                                      or spec.get("sharedCounters")):
                continue
            node_ok = None
            if spec.get("sharedCounters"):
                relevant = True
            elif spec.get("nodeName") or spec.get("allNodes") or spec.get("nodeSelector"):
                relevant = _node_matches(node, spec.get("nodeName") or "",
                                         bool(spec.get("allNodes")), spec.get("nodeSelector"))
            elif spec.get("perDeviceNodeSelection"):
                names = _devices_on(node, spec)
                relevant, node_ok = bool(names), names
            else:
                continue
            if not relevant:
                continue
            _keep_newest(groups, s, node_ok)
        plain: list[Pool] = []
        for pid, kept in groups.items():
            first = self._first(kept)["spec"]["pool"]
            count = first.get("resourceSliceCount", 1)
            all_slices = None
            if len(kept) != count:
                gen = first.get("generation", 0)
                same = []
                obsolete = False
                for s in self._by_pool.get(pid, ()):
                    g = s["spec"]["pool"].get("generation", 0)
                    if g > gen:
                        obsolete = True
                        break
                    if g == gen:
                        same.append(s)
                if obsolete:
                    continue
                if len(same) != count:
                    # kept for explanations and for [1.34], whose ExactCount still used
                    # incomplete pools; the search skips them otherwise
                    plain.append(Pool(pid[0], pid[1], incomplete=True,
                                      slices=self._views(kept)))
                    continue
                all_slices = same
            plain.append(self._build(pid, kept, all_slices))
        return self._ordered(plain)

    def _gather_134(self, node) -> list[Pool]:
        groups: dict[tuple[str, str], list[tuple[dict, frozenset | None]]] = {}
        for s in self._by_node.get(node.name, []) + self._shared:
            spec = s["spec"]
            per_device = spec.get("perDeviceNodeSelection")
            if per_device is not None and not self.profile.partitionable_devices:
                continue
            node_ok = None
            if spec.get("nodeName") or spec.get("allNodes") or spec.get("nodeSelector"):
                if not _node_matches(node, spec.get("nodeName") or "",
                                     bool(spec.get("allNodes")), spec.get("nodeSelector")):
                    continue
            elif per_device:
                node_ok = _devices_on(node, spec)
                if not node_ok:
                    continue
            else:
                continue
            _keep_newest(groups, s, node_ok)
        plain: list[Pool] = []
        for pid, kept in groups.items():
            count = self._first(kept)["spec"]["pool"].get("resourceSliceCount", 1)
            pool = Pool(pid[0], pid[1], incomplete=len(kept) != count, slices=self._views(kept))
            names: set[str] = set()
            for v in pool.slices:
                for d in v.devices:
                    if d.name in names and not pool.invalid:
                        pool.invalid, pool.invalid_reason = True, f"duplicate device name {d.name}"
                    names.add(d.name)
            pool.fully_visible = (len(self._by_pool.get(pid, ())) == len(kept)
                                  and all(v.node_ok is None for v in pool.slices))
            pool.device_count = sum(len(v.devices) for v in pool.slices)
            pool.multi = any(d.multi_raw for v in pool.slices for d in v.devices)
            plain.append(pool)
        return self._ordered(plain)

    def _ordered(self, pools: list[Pool]) -> list[Pool]:
        """Pools sorted by (driver, pool); in the experimental variant, complete pools with
        binding-condition devices last (spec §3.2, order)."""
        pools.sort(key=lambda p: p.key)
        if not self.profile.binding_slices_last:
            return pools
        # upstream's incomplete and invalid pools carry no slices, so they never go last;
        # [1.34] they still carry their slices (and ExactCount uses incomplete ones)
        legacy = self.profile.legacy_pools
        last = {id(p) for p in pools if (p.usable or legacy)
                and any(d.binding_conditions for v in p.slices for d in v.devices)}
        return ([p for p in pools if id(p) not in last]
                + [p for p in pools if id(p) in last])

    def _views(self, kept: list[tuple[dict, frozenset | None]]) -> list[SliceView]:
        views = [SliceView(s, self.devices(s), bool(s["spec"].get("perDeviceNodeSelection")),
                           ok) for s, ok in kept]
        views.sort(key=lambda v: self._slice_order(v.raw))
        return views

    def _slice_order(self, slice_: dict) -> tuple:
        """A pool's slices by name, those with binding-condition devices last where
        ``binding_slices_last_in_pool`` (docs/v1.md, "Pool order")."""
        name = slice_.get("metadata", {}).get("name", "")
        if self.profile.binding_slices_last_in_pool:
            return (any(d.binding_conditions for d in self.devices(slice_)), name)
        return (name,)

    def _first(self, kept: list[tuple[dict, frozenset | None]]) -> dict:
        """The pool's first slice in that order (the node's own slices first where
        ``node_slices_first``): upstream reads the pool's resourceSliceCount from its first
        slice (in informer order, which the planner takes to be by name), so slices that
        disagree on it are read the same way."""
        if self.profile.node_slices_first:
            return min((s for s, _ in kept),
                       key=lambda s: (not _on_node(s["spec"]), self._slice_order(s)))
        return min((s for s, _ in kept), key=self._slice_order)

    def _build(self, pid, kept, all_slices) -> Pool:
        pool = Pool(pid[0], pid[1])
        views = self._views(kept)
        partitionable = self.profile.partitionable_devices
        device_views = [v for v in views if not (partitionable
                                                 and v.raw["spec"].get("sharedCounters"))]
        counter_views = [v for v in views if partitionable
                         and v.raw["spec"].get("sharedCounters")]
        pool.slices = device_views
        names: set[str] = set()
        for v in device_views:
            for d in v.devices:
                if d.name in names:
                    return _invalid(pool, f"duplicate device name {d.name}")
                names.add(d.name)
        if partitionable:
            for v in counter_views:
                for cs in v.raw["spec"]["sharedCounters"]:
                    if cs["name"] in pool.counter_sets:
                        return _invalid(pool, f"duplicate counter set name {cs['name']}")
                    pool.counter_sets[cs["name"]] = {
                        n: quantity_value(c["value"]) for n, c in
                        (cs.get("counters") or {}).items()}
            reason = _check_consumption(pool.counter_sets, views)
            if reason:
                return _invalid(pool, reason)
            if all_slices is not None and len(all_slices) != len(kept):
                seen = {v.name for v in views}
                pool.other_slices = [SliceView(s, self.devices(s), False) for s in all_slices
                                     if s.get("metadata", {}).get("name", "") not in seen]
                reason = _check_consumption(pool.counter_sets, pool.other_slices)
                if reason:
                    return _invalid(pool, reason)
        total = len(self._by_pool.get(pid, ()))
        pool.fully_visible = (total == len(kept)
                              and all(v.node_ok is None for v in device_views))
        pool.device_count = sum(len(v.devices) for v in device_views)
        pool.multi = any(d.multi_raw for v in device_views for d in v.devices)
        return pool


def _invalid(pool: Pool, reason: str) -> Pool:
    return Pool(pool.driver, pool.name, invalid=True, invalid_reason=reason, slices=pool.slices)


def _check_consumption(counter_sets: dict, views: list[SliceView]) -> str:
    for v in views:
        for d in v.devices:
            for set_name, counters in d.consumes:
                known = counter_sets.get(set_name)
                if known is None:
                    return f"counter set {set_name} not found"
                for counter in counters:
                    if counter not in known:
                        return f"counter {counter} not found in counter set {set_name}"
    return ""
