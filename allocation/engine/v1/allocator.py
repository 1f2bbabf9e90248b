"""The v1 allocator's long-lived side (docs/v1.md): slices, classes, compiled selectors,
per-device selector results and the book of allocations, across Allocate calls.

``Allocator.allocate`` runs one ``Search`` (one pod's claims on one node);
``Allocator.first_fit`` tries nodes in order, skipping nodes known to have nothing free;
``Allocator.attempt`` gives a scheduler that filters nodes itself the same skipping.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import filterfalse, islice

from allocation.engine.cel import CelEvaluationError
from allocation.engine.cel.device import compile_device_selector
from allocation.engine.labels import node_selector_matches
from allocation.engine.v1.book import AllocationBook
from allocation.engine.v1.errors import CelRuntimeError
from allocation.engine.v1.features import Profile
from allocation.engine.v1.pools import Pool, SliceIndex, node_view
from allocation.engine.v1.preflight import Plan
from allocation.engine.v1.requests import ClaimState, RequestData, claim_key
from allocation.engine.v1.results import build_allocation
from allocation.engine.v1.search import Outcome, Search, no_fit, nothing_free
from allocation.engine.v1.single import first_free, invocations

__all__ = ["NOT_AVAILABLE", "Allocator", "Attempt", "allocated_claim_fits", "dra_score"]

NOT_AVAILABLE = "resourceclaim not available on the node"

_DRIVER_ONLY = (("driver",),)
"""What a compiled selector that reads nothing but ``device.driver`` reports it reads."""


def allocated_claim_fits(claim: dict, node: dict) -> bool:
    """Whether an allocated claim's ``allocation.nodeSelector`` admits ``node`` (no
    selector: every node). A pod with a claim that does not is refused with NOT_AVAILABLE."""
    selector = ((claim.get("status") or {}).get("allocation") or {}).get("nodeSelector")
    return selector is None or node_selector_matches(selector, node_view(node))


def dra_score(claims: list[dict], allocations: list[dict]) -> int:
    """The DRA plugin's node score for these allocations (spec section 3.11): 8 - i for
    every chosen subrequest at position i of its request's ``firstAvailable``."""
    score = 0
    for claim, allocation in zip(claims, allocations, strict=True):
        positions = {}
        for req in claim["spec"]["devices"].get("requests") or ():
            for i, sub in enumerate(req.get("firstAvailable") or ()):
                positions[f"{req['name']}/{sub['name']}"] = i
        chosen = {r["request"] for r in allocation["devices"].get("results") or ()}
        score += sum(8 - positions[name] for name in chosen if name in positions)
    return score


class Allocator:
    """Allocates v1 claims on nodes; lives as long as the cluster's slices and classes.

    ``compile_selector(expression)`` returns an object with ``matches(driver, device)`` and
    ``source``; by default ``allocation.engine.cel.device.compile_device_selector`` with the
    profile's gates (``Profile.selector_options``). ``index``: the slices already indexed
    under an equal profile (instead of ``slices``), its devices' selector results made with that
    default; its pools are shared, so that other allocators may use them too.
    """

    def __init__(self, profile: Profile, compile_selector: Callable | None = None, *,
                 slices: list[dict] = (), classes: list[dict] = (),
                 book: AllocationBook | None = None, index: SliceIndex | None = None) -> None:
        self.profile = profile
        if compile_selector is None:
            compile_selector = partial(compile_device_selector, **profile.selector_options)
        self._compile = compile_selector
        self._compiled: dict[str, object] = {}
        # sources of compiled selectors that read only ``device.driver``, and their result
        # per (source, driver) (``selector_result``)
        self._driver_only: set[str] = set()
        self._by_driver: dict[tuple[str, str], bool] = {}
        # counters for benchmarks: devices that reached the selector step of a search, and
        # selector results computed (misses of the per-device cache)
        self.examined = 0
        self.evaluated = 0
        self.book = book if book is not None else AllocationBook(profile.consumable_capacity)
        self.book.release_listeners.append(self._freed)
        # nodes known to have no free device in any usable pool, and which nodes see a pool
        self._full: set[str] = set()
        self._full_reason: dict[str, str] = {}  # the outcome reason of a node in _full
        self._pool_nodes: dict[tuple[str, str], set[str]] = {}
        self._names_key: tuple = ()
        # every node of the current list at an index in [1, _hint) is in _full
        self._hint = 1
        self._names: list[str] = []
        self._indexes: dict[str, int] = {}
        if index is None:
            self.set_slices(slices)
        else:  # the slices' index, made earlier for ``profile`` (engine/v1_pools.py)
            self.index = index
        self.set_classes(classes)

    def set_slices(self, slices: list[dict]) -> None:
        """Replace every ResourceSlice; drops the per-node pools and selector results."""
        self.index = SliceIndex(list(slices), self.profile)
        self._full.clear()
        self._pool_nodes.clear()
        self._hint = 1

    def set_classes(self, classes: list[dict]) -> None:
        """Replace every DeviceClass; drops the prepared requests."""
        self.classes = {c["metadata"]["name"]: c for c in classes}
        # id(claim spec) -> (spec, requests, subrequest counts, constraint makers, kinds of
        # requests): a spec that passed the preflight once, prepared (``preflight.prepare``);
        # specs are immutable, so the claims of one template share one entry
        self.prepared: dict[int, tuple] = {}
        # ids of a pod's claim specs -> the last reusable plan of claims of those very specs
        # (``Attempt``: the next pod of the same templates skips the preflight; docs/v1.md,
        # "Speed"); made under ``prepared``, so dropped with it
        self.plans: dict[tuple[int, ...], Plan] = {}

    def compiled(self, expression: str):
        """The compiled selector for ``expression`` (cached). Raises CelCompileError."""
        sel = self._compiled.get(expression)
        if sel is None:
            sel = self._compile(expression)
            if getattr(sel, "reads", None) == _DRIVER_ONLY:
                self._driver_only.add(sel.source)
            self._compiled[expression] = sel
        return sel

    def pools_for(self, node: dict) -> list[Pool]:
        """The pools visible on ``node`` (docs/v1.md, visible pools)."""
        return self.index.pools_for(node)

    def allocate(self, node: dict, claims: list[dict]) -> Outcome:
        """Allocate every claim of ``claims`` (unallocated, in the pod's order) on ``node``.

        Returns an Outcome with one allocation dict per claim, or the reason they do not fit
        here. Raises AllocationError (fatal for the scheduling attempt) and
        UnschedulableError (a missing DeviceClass).
        """
        return Search(self, node, claims).run()

    def attempt(self, claims: list[dict]) -> Attempt:
        """One pod's ``claims`` to try on node after node (see ``Attempt``)."""
        return Attempt(self, claims)

    def first_fit(self, nodes: list[dict], claims: list[dict]) -> tuple[dict, Outcome] | None:
        """Try ``nodes`` in order and return the first ``(node, outcome)`` that fits, or
        None. Exactly ``allocate`` on each node in turn, except that nodes known to have no
        free device are skipped when that cannot change the outcome (only normal ExactCount
        requests). Raises as ``allocate`` does.
        """
        if not nodes:
            return None
        # the first node always runs: node-independent preflight errors still raise
        search = Search(self, nodes[0], claims)
        outcome = search.run()
        if outcome.allocations is not None:
            return nodes[0], outcome
        plan = search.plan if search.plan.reusable else None  # prepared once for all nodes
        if not search.plan.full_node_refuses:
            candidates = range(1, len(nodes))
        else:
            indexes = self._node_indexes(nodes)
            candidates = (indexes[name] for name in
                          filterfalse(self._full.__contains__,
                                      islice(self._names, self._hint, None)))
        found = None
        for i in candidates:
            outcome = Search(self, nodes[i], claims, plan).run()
            if outcome.allocations is not None:
                found = (nodes[i], outcome)
                break
        self._advance_hint()
        return found

    def _advance_hint(self) -> None:
        names, full, hint = self._names, self._full, self._hint
        while hint < len(names) and names[hint] in full:
            hint += 1
        self._hint = hint

    def _node_indexes(self, nodes: list[dict]) -> dict[str, int]:
        # Names of the last node list seen: the scheduler passes the same list for every
        # pod, so this is computed once, not per call. A changed list (other object,
        # length, first or last node) is read again.
        key = (id(nodes), len(nodes), id(nodes[0]), id(nodes[-1]))
        if key != self._names_key:
            self._names = [(n.get("metadata") or {}).get("name", "") for n in nodes]
            self._indexes = {name: i for i, name in reversed(list(enumerate(self._names)))}
            self._names_key = key
            self._hint = 1
        return self._indexes

    def _freed(self, pool_keys: set) -> None:
        for key in pool_keys:
            names = self._pool_nodes.get(key, ())
            self._full.difference_update(names)
            for name in names:
                index = self._indexes.get(name)
                if index is not None and index < self._hint:
                    self._hint = max(1, index)

    def note_full(self, node_name: str, pools: list[Pool], reason: str) -> None:
        """Remember that ``node_name`` has no free device until a release in its pools, and
        the ``reason`` its allocations failed with."""
        self._full.add(node_name)
        self._full_reason[node_name] = reason
        for pool in pools:
            self._pool_nodes.setdefault(pool.key, set()).add(node_name)

    def commit(self, claim: dict, allocation: dict) -> None:
        """Record an allocation in the book (see ``AllocationBook.commit``)."""
        self.book.commit(claim_key(claim), allocation)

    def release(self, claim: dict) -> None:
        """Forget a claim's allocation."""
        self.book.release(claim_key(claim))

    def selectable(self, claim: ClaimState, rd: RequestData, view, dev) -> bool:
        """Whether ``dev`` of slice ``view`` may serve ``rd`` of ``claim`` (the search's
        per-device step before its book and capacity checks): binding conditions, class
        then request selectors (lazy), per-device nodes."""
        self.examined += 1
        if dev.binding_conditions and not self.profile.binding_and_status:
            return False
        result = self.selector_result
        try:
            for sel, owner, i in rd.class_selectors:
                if not result(dev, sel, owner, i):
                    return False
            for sel, i in rd.selectors:
                if not result(dev, sel, claim.owner, i):
                    return False
        except CelRuntimeError as exc:  # spec section 6: say which claim and request
            exc.place(claim.key, rd.result_name)
            raise
        return not (view.per_device and dev.name not in view.node_ok)

    def selector_result(self, dev, sel, owner: str, index: int) -> bool:
        """Whether ``sel`` accepts ``dev``; cached per device. Raises CelRuntimeError (an
        AllocationError with upstream's text ``owner: selector #index: CEL runtime error:
        ...``) naming the device and expression too."""
        cache = dev.selector_cache
        src = sel.source
        found = cache.get(src)
        if found is None:
            # a selector that reads only the driver (a class's usual one) answers alike for
            # every device of a driver: its compiled form caches by what it reads, too
            by_driver = (src, dev.driver) if src in self._driver_only else None
            if by_driver is not None:
                found = self._by_driver.get(by_driver)
            if found is None:
                self.evaluated += 1
                try:
                    found = bool(sel.matches(dev.driver, dev.raw))
                except CelEvaluationError as exc:
                    raise CelRuntimeError(owner, index, src, "/".join(dev.key),
                                          str(exc)) from exc
                if by_driver is not None:
                    self._by_driver[by_driver] = found
            cache[src] = found
        return found


class Attempt:
    """One pod's claims tried on node after node by a scheduler that picks the nodes (and
    filters them by its own checks first).

    ``allocate(node)`` is exactly ``Allocator.allocate(node, claims)``, except that once one
    call has passed the node-independent preflight (or found the plan of another pod's
    claims of the very same specs, which passed it), a node known to have no free device is
    answered without a search when that cannot change the outcome (only normal ExactCount
    requests; docs/v1.md, "Speed"), and the claims prepared by that call are searched again
    on the next nodes (``preflight.Plan``: unless a request lists a node's devices, or the
    classes were replaced). A planned call of one claim of one plain request is answered
    without a ``Search`` (nor the claim prepared) when ``single.first_free`` decides it.
    The claims must not change between calls.
    """

    __slots__ = ("_alloc", "_claims", "_skip", "_plan")

    def __init__(self, alloc: Allocator, claims: list[dict]) -> None:
        self._alloc = alloc
        self._claims = claims
        self._skip = None  # becomes the Allocator's full-node set after a first call
        self._plan: Plan | None = None  # the claims, prepared by a first call

    def known(self, node_name: str) -> str | None:
        """The reason ``allocate`` would give on the node called ``node_name`` when it is
        known without a search (a node with nothing free, after a first call or a call
        that found another pod's plan of the very same specs), else None."""
        skip = self._skip
        if skip is not None and node_name in skip:
            return self._alloc._full_reason[node_name]
        return None

    def allocate(self, node: dict) -> Outcome:
        """The outcome on ``node``. Raises as ``Allocator.allocate`` does."""
        name = (node.get("metadata") or {}).get("name", "")
        if self._skip is not None:  # else nothing is known yet (no call to ``known``)
            reason = self.known(name)
            if reason is not None:
                return Outcome(None, reason)
        alloc = self._alloc
        plan = self._plan
        if plan is not None and plan.prepared is not alloc.prepared:
            plan = self._plan = None  # set_classes: prepared under the old classes
        key = None
        if plan is None:
            # another pod's plan of the very same specs (an id is reused once its object
            # is gone, hence same_specs)
            claims = self._claims
            key = ((id(claims[0]["spec"]),) if len(claims) == 1  # the usual pod: no list
                   else tuple([id(c["spec"]) for c in claims]))
            plan = alloc.plans.get(key)
            if plan is not None and not plan.same_specs(self._claims):
                plan = None
            elif plan is not None:
                # these very specs passed the node-independent preflight under these
                # classes: this pod's nodes known full are known from its first call on
                self._plan = plan
                if self._skip is None and plan.full_node_refuses:
                    self._skip = alloc._full
                    reason = self.known(name)
                    if reason is not None:
                        return Outcome(None, reason)
        outcome = None
        tried = plan is not None and plan.single is not None
        if tried:
            outcome = self._first_free(node, name, plan)
        if outcome is None:
            search = Search(alloc, node, self._claims, plan)
            outcome = search.run(shortcut=not tried)
            plan = search.plan
        if self._plan is None:
            if plan.reusable:
                self._plan = alloc.plans[key] = plan
            if self._skip is None and plan.full_node_refuses:
                self._skip = alloc._full
        return outcome

    def _first_free(self, node: dict, name: str, plan: Plan) -> Outcome | None:
        """``Search(..., plan).run()``'s outcome for a plan of one claim of one plain
        request (``Plan.single``) without the ``Search``: the nothing-free answer, or the
        first free devices (``single.first_free``); None when the search must decide."""
        alloc = self._alloc
        pools = alloc.index.pools_for(node)  # ``Allocator.pools_for``, one call less
        rd = plan.single
        # first_free before the nothing-free answer (the search's order reversed): where
        # that answer holds, first_free meets no free device, so it evaluates and raises
        # nothing and answers None; asked first, it spares the answer's walk on every fit
        try:
            # the plan's claim, not this pod's (no claim prepared per pod): it only names
            # the claim in a CEL runtime error, which the search then raises again, at
            # the same device, naming this pod's (``single.py``)
            picks = first_free(alloc, pools, plan.claims[0], rd)
        except CelRuntimeError:
            return None
        if picks is None:
            if nothing_free(plan, pools, alloc.book, alloc.profile):
                outcome = no_fit(pools, 0)
                alloc.note_full(name, pools, outcome.reason)
                return outcome
            return None
        return Outcome([build_allocation(self._claims[0], picks, {}, plan.single_classes, name,
                                         alloc.profile, plan.single_config_free)],
                       invocations=invocations(picks))
