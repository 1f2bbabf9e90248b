"""The preflight of one Allocate call: every claim's classes checked, its requests and
constraints prepared (docs/v1.md, search), as upstream's allocator does before the search.

``prepare(search)`` gives a ``Plan``: the claims' prepared requests (``ClaimState``) and
what the search can know of them in advance. A plan is kept for the next node the same pod
tries (``Plan.fresh``) when nothing in it depends on the node (no ``All`` request: those
list the node's devices), so a pod's claims are prepared once, not once per node; and a
claim spec that passed once is prepared once per allocator (``Allocator.prepared``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from allocation.engine.cel import CelCompileError
from allocation.engine.v1.constraints import DistinctAttribute, MatchAttribute
from allocation.engine.v1.errors import AllocationError, UnschedulableError
from allocation.engine.v1.requests import ClaimState, RequestData
from allocation.engine.v1.results import allocation_config

if TYPE_CHECKING:
    from allocation.engine.v1.search import Search

__all__ = ["MAX_RESULTS", "Plan", "prepare"]

MAX_RESULTS = 32  # resourceapi.AllocationResultsMaxSize


class Plan:
    """One call's claims after the preflight, and what the search knows of them before it
    starts. ``fresh()`` gives the same claims for another call on another node: the shared
    requests, new constraints (of the same settings, see ``_Constraint.fresh``), no picks.
    """

    __slots__ = ("claims", "prepared", "exact_only", "needs_devices", "reusable", "single",
                 "single_classes", "single_config_free", "_constraints")

    def __init__(self, claims: list[ClaimState], prepared: dict) -> None:
        self.claims = claims
        # the allocator's cache of prepared specs this plan was made under (set_classes
        # replaces it: a plan of the old classes is not reused then)
        self.prepared = prepared
        # only normal ExactCount requests (no All, no adminAccess): a node with nothing
        # free cannot fit them (search.nothing_free, Allocator's full nodes); claims
        # without requests fit on any node; All requests list the node's own devices, so
        # such claims are prepared per node
        self.exact_only, self.needs_devices, self.reusable = True, False, True
        for claim in claims:
            exact_only, needs_devices, all_mode = claim.kinds
            self.exact_only &= exact_only
            self.needs_devices |= needs_devices
            self.reusable &= not all_mode
        # kept before any add(): fresh() copies their settings, not their state
        self._constraints = [[con.fresh() for con in c.constraints] for c in claims]
        self.single = _single(claims)
        # the one request's class by request index, and whether its allocations carry no
        # config: alike for every claim of these specs (``Attempt``'s results)
        self.single_classes = self.single_config_free = None
        if self.single is not None:
            self.single_classes = {0: self.single.klass}
            self.single_config_free = not allocation_config(claims[0].raw, {},
                                                            self.single_classes)

    @property
    def full_node_refuses(self) -> bool:
        """Whether a node with no free device cannot fit these claims (the one rule behind
        ``Search``'s nothing-free answer and the full nodes the Allocator and ``Attempt``
        skip): only normal ExactCount requests, and at least one device asked for."""
        return self.exact_only and self.needs_devices

    def fresh(self, claims: list[dict] | None = None) -> list[ClaimState]:
        """The claims, prepared, with empty constraints and no picks (another call).

        ``claims``: other claims of the very same spec objects, in order (another pod of
        the same templates, ``same_specs``), prepared alike: a reusable plan's preflight read
        only the specs, the classes and the profile, never a node or a claim's identity,
        which only names the claim (``ClaimState.key``, ``owner``) and its results."""
        if len(self.claims) == 1 and not self._constraints[0]:  # the usual pod: no zip
            return [self.claims[0].fresh(claims[0] if claims is not None else None)]
        out = []
        raws = claims if claims is not None else [None] * len(self.claims)
        for claim, constraints, raw in zip(self.claims, self._constraints, raws,
                                           strict=True):
            twin = claim.fresh(raw)
            if constraints:  # most claims have none: no comprehension then (per call)
                twin.constraints = [con.fresh() for con in constraints]
            out.append(twin)
        return out

    def same_specs(self, claims: list[dict]) -> bool:
        """Whether ``claims`` have this plan's claims' very spec objects, in order (the
        plan may then be searched for them: ``fresh(claims)``)."""
        mine = self.claims
        if len(mine) != len(claims):
            return False
        if len(mine) == 1:  # the usual pod: no generator (asked per pod)
            return mine[0].raw["spec"] is claims[0]["spec"]
        return all(c.raw["spec"] is other["spec"] for c, other in zip(mine, claims, strict=True))


def _single(claims: list[ClaimState]) -> RequestData | None:
    """The request of a call of one claim with one plain request (ExactCount, not admin,
    no subrequests, no constraints), which ``single.first_free`` may serve, else None."""
    if len(claims) != 1:
        return None
    claim = claims[0]
    if claim.constraints or claim.subs or len(claim.data) != 1:
        return None
    rd = claim.data.get((0, 0))
    if rd is None or rd.parent is not None or rd.all_mode or rd.admin:
        return None
    return rd


def prepare(search: Search) -> Plan:
    """The preflight of ``search``'s claims (every class first, then claim by claim).

    Raises:
        UnschedulableError: a DeviceClass does not exist.
        AllocationError: a request or constraint the profile cannot allocate (fatal).
    """
    for claim in search.claims:
        _check_classes(search, claim)
    for ci, claim in enumerate(search.claims):
        _prepare(search, ci, claim)
    return Plan(search.claims, search.alloc.prepared)


def _check_classes(search: Search, claim: ClaimState) -> None:
    # kube-scheduler's PreFilter checks every class of every claim before the allocator
    # runs, so a missing class wins over any preflight error of an earlier claim
    if _known(search, claim.raw["spec"]) is not None:
        return  # prepared (_prepare): its classes existed, and set_classes drops that
    for req in claim.requests:
        subs = req.get("firstAvailable") or ()
        for body, name in ([(sub, f"{req['name']}/{sub['name']}") for sub in subs]
                           or [(req.get("exactly") or {}, req["name"])]):
            class_name = body.get("deviceClassName") or ""
            if class_name not in search.alloc.classes:
                raise UnschedulableError(f"request {name}: device class {class_name} "
                                         "does not exist")


def _known(search: Search, spec: dict) -> tuple | None:
    # the allocator's entry for this very spec object (an id may be reused once the spec
    # is gone, hence the identity check)
    known = search.alloc.prepared.get(id(spec))
    return known if known is not None and known[0] is spec else None


def _prepare(search: Search, ci: int, claim: ClaimState) -> None:
    spec = claim.raw["spec"]
    known = _known(search, spec)
    if known is not None:
        # the same (immutable) spec passed this preflight: its requests, shared
        _spec, claim.data, claim.subs, constraints, claim.kinds = known
        claim.constraints = [con.fresh() for con in constraints]
        return
    _preflight(search, ci, claim)
    datas = claim.data.values()
    all_mode = any(rd.all_mode for rd in datas)
    claim.kinds = (not any(rd.all_mode or rd.admin for rd in datas), bool(datas), all_mode)
    if not all_mode:  # All: per node
        # kept before any add(): fresh() copies their settings, not their state
        search.alloc.prepared[id(spec)] = (spec, claim.data, claim.subs,
                                           [c.fresh() for c in claim.constraints],
                                           claim.kinds)


def _preflight(search: Search, ci: int, claim: ClaimState) -> None:
    p = search.profile
    minimum = 0
    for ri, req in enumerate(claim.requests):
        subs = req.get("firstAvailable") or []
        if subs and not p.prioritized_list:
            raise AllocationError(f"claim {claim.key}, request {req['name']}: has "
                                  "subrequests, but the DRAPrioritizedList feature is "
                                  "disabled")
        if not p.consumable_capacity and p.capacity_gate_checked:
            exactly = req.get("exactly") or {}
            if exactly.get("capacity") is not None:
                raise AllocationError(
                    f"claim {claim.key}, request {req['name']}: has capacity requests, "
                    "but the DRAConsumableCapacity feature is disabled")
            for sub in subs:
                if sub.get("capacity") is not None:
                    raise AllocationError(
                        f"claim {claim.key}, subrequest {sub['name']}: has capacity "
                        "requests, but the DRAConsumableCapacity feature is disabled")
        if subs:
            claim.subs[ri] = len(subs)
            least = None
            for si, sub in enumerate(subs):
                rd = _validate(search, claim, ci, RequestData(sub, req["name"]), sub,
                               _lister(p, claim, ri, si))
                claim.data[(ri, si)] = rd
                least = rd.num_devices if least is None else min(least, rd.num_devices)
            minimum += least or 0
        else:
            body = req.get("exactly") or {}
            body = {**body, "name": req["name"]}
            rd = _validate(search, claim, ci, RequestData(body, None), body)
            claim.data[(ri, 0)] = rd
            minimum += rd.num_devices
    if minimum > MAX_RESULTS:
        raise AllocationError(f"claim {claim.key}: number of requested devices {minimum} "
                              f"exceeds the claim limit of {MAX_RESULTS}")
    for i, con in enumerate(claim.raw["spec"]["devices"].get("constraints") or ()):
        if con.get("matchAttribute"):
            claim.constraints.append(MatchAttribute(con.get("requests") or [],
                                                    con["matchAttribute"],
                                                    p.list_type_attributes))
        elif con.get("distinctAttribute") and p.distinct_attribute:
            claim.constraints.append(DistinctAttribute(
                con.get("requests") or [], con["distinctAttribute"], p.distinct_by_identity,
                p.list_type_attributes))
        else:
            raise AllocationError(f"claim {claim.key}, constraint #{i}: empty constraint "
                                  "(unsupported constraint type?)")


def _lister(profile, claim: ClaimState, ri: int, si: int) -> RequestData | None:
    """The subrequest whose selector results an All subrequest's device list uses instead
    of its own: subrequest 0 for subrequest 1 when 0 is All too
    (``Profile.second_all_subrequest_lists_first``), else None (its own)."""
    if si != 1 or not profile.second_all_subrequest_lists_first:
        return None
    first = claim.data.get((ri, 0))
    return first if first is not None and first.all_mode else None


def _validate(search: Search, claim: ClaimState, ci: int, rd: RequestData,
              body: dict, lister: RequestData | None = None) -> RequestData:
    for i, sel in enumerate(body.get("selectors") or ()):
        if not (sel.get("cel") or {}).get("expression"):
            raise AllocationError(f"claim {claim.key}, request {rd.name}, selector #{i}: "
                                  "CEL expression empty (unsupported selector type?)")
    if rd.admin and not search.profile.admin_access:
        raise AllocationError(f"claim {claim.key}, request {rd.name}: admin access is "
                              "requested, but the feature is disabled")
    class_name = body.get("deviceClassName") or ""
    rd.klass = klass = search.alloc.classes[class_name]  # _check_classes: it exists
    rd.class_selectors = [_compile(search, s, f"class {class_name}", i) for i, s in
                          enumerate((klass.get("spec") or {}).get("selectors") or ())]
    # (compiled, index): the owner is the claim's (``ClaimState.owner``), which a request
    # prepared once serves for every claim of the same spec (``_prepare``)
    rd.selectors = [_compile(search, s, claim.owner, i)[::2] for i, s in
                    enumerate(body.get("selectors") or ())]
    if rd.all_mode:
        _list_all(search, claim, ci, rd, lister or rd)
    return rd


def _compile(search: Search, selector: dict, owner: str, index: int):
    expression = (selector.get("cel") or {}).get("expression") or ""
    try:
        return (search.alloc.compiled(expression), owner, index)
    except CelCompileError as exc:
        raise AllocationError(f"{owner}: selector #{index}: CEL compile error: {exc}") \
            from exc


def _list_all(search: Search, claim: ClaimState, ci: int, rd: RequestData,
              lister: RequestData) -> None:
    """``rd``'s All device list: every device ``lister`` selects (``rd`` itself but for
    :func:`_lister`'s quirk) whose capacity can serve ``rd``."""
    for pool in search.pools:
        if pool.incomplete:
            raise AllocationError(f"claim {claim.key}, request {rd.name}: asks for all "
                                  f"devices, but resource pool {pool.driver}/{pool.name} "
                                  "is currently being updated")
        if pool.invalid:
            raise AllocationError(f"claim {claim.key}, request {rd.name}: asks for all "
                                  f"devices, but resource pool {pool.driver}/{pool.name} "
                                  "is currently invalid")
        for view in pool.slices:
            for dev in view.devices:
                if not search.alloc.selectable(claim, lister, view, dev):
                    continue
                if search.consumable and search.capacity_reason(rd, dev):
                    continue
                rd.all_devices.append((pool, view, dev))
    rd.num_devices = len(rd.all_devices)
