"""Why devices did not fit: per node, per request and subrequest (docs/v1.md, explanations).

Only for pods that stay pending; the fast path never calls this. The scheduler's
``draplanner.io/explain`` annotation (``scheduling/v1_explain.py``) is written from these
verdicts. Every device of the
node's pools gets one ``DeviceVerdict``, checked against the book (not against what the
search held mid-call) in the search's order: pool, in use, selectors, per-device node,
capacity, counters, taints, constraints. A presenter renders the dataclasses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from allocation.engine.cel import CelCompileError
from allocation.engine.quantity import Quantity
from allocation.engine.v1.allocator import Allocator
from allocation.engine.v1.constraints import attributes_meet, lookup_attribute
from allocation.engine.v1.errors import (
    AllocationError,
    CelRuntimeError,
    UnschedulableError,
    selector_name,
)
from allocation.engine.v1.requests import ClaimState, RequestData
from allocation.engine.v1.search import Search
from allocation.engine.v1.taints import untolerated_taint

__all__ = [
    "REASONS",
    "DeviceVerdict",
    "NodeExplanation",
    "RequestExplanation",
    "explain_node",
    "explain_requests",
]

REASONS = (
    "matched", "pool-incomplete", "pool-invalid", "in-use", "binding-conditions-disabled",
    "class-selector-false", "request-selector-false", "cel-error", "not-on-node",
    "capacity", "counters-disabled", "counters", "taint", "constraint",
)


@dataclass(frozen=True)
class DeviceVerdict:
    """One device for one request: ``reason`` is one of REASONS; the rest details it."""

    device: str  # driver/pool/device
    reason: str
    expression: str = ""  # the selector that was false or failed
    selector: str = ""  # cel-error: "class C selector #i" or "request selector #i"
    key: str = ""  # cel-error: the map key the expression read and the device lacks
    error: str = ""  # CEL error, capacity or pool message
    capacity: str = ""  # capacity: the capacity that does not fit
    claim: str = ""  # in-use: the claim holding the device
    counter_set: str = ""
    counter: str = ""
    available: str = ""
    needed: str = ""
    taint: dict | None = None
    constraint: str = ""  # e.g. "matchAttribute gpu.example.com/model"
    against: str = ""  # the device the constraint compared with


@dataclass
class RequestExplanation:
    """The verdicts of one request (``req``) or subrequest (``req/sub``) of one claim."""

    claim: str
    request: str
    device_class: str = ""
    selectors: list[str] = field(default_factory=list)  # the class's, then the request's
    matched: list[str] = field(default_factory=list)
    refused: list[DeviceVerdict] = field(default_factory=list)


@dataclass
class NodeExplanation:
    """Why the claims do not fit on one node."""

    node: str
    reason: str = ""  # "cannot allocate all claims", ... or "" when they fit
    fatal: str = ""  # a fatal allocator error, when there was one
    requests: list[RequestExplanation] = field(default_factory=list)


def explain_node(alloc: Allocator, node: dict, claims: list[dict]) -> NodeExplanation:
    """Run the allocation on ``node`` and explain every request's devices.

    Returns the NodeExplanation; never raises for allocator errors (they become ``fatal``).
    """
    name = (node.get("metadata") or {}).get("name", "")
    out = NodeExplanation(node=name)
    try:
        outcome = alloc.allocate(node, claims)
        out.reason = outcome.reason
    except (AllocationError, UnschedulableError) as exc:
        out.fatal = str(exc)
    out.requests = explain_requests(alloc, node, claims)
    return out


def explain_requests(alloc: Allocator, node: dict, claims: list[dict]
                     ) -> list[RequestExplanation]:
    """The verdicts of every request and subrequest of ``claims`` on ``node``, in claim,
    request and subrequest order, without running the search (the caller knows why the
    claims do not fit).

    Returns:
        One RequestExplanation per request without subrequests and per subrequest.
    """
    requests: list[RequestExplanation] = []
    search = Search(alloc, node, [])
    devices = {"/".join(d.key): d for p in search.pools for v in p.slices for d in v.devices}
    for ci, raw in enumerate(claims):
        claim = ClaimState(raw)
        for req in claim.requests:
            subs = req.get("firstAvailable") or []
            bodies = ([(s, req["name"]) for s in subs] if subs
                      else [({**(req.get("exactly") or {}), "name": req["name"]}, None)])
            for body, parent in bodies:
                requests.append(_explain_request(search, ci, claim, body, parent))
        _constraints(claim, raw, requests, devices, search.profile.list_type_attributes)
    return requests


def _explain_request(search: Search, ci: int, claim: ClaimState, body: dict,
                     parent: str | None) -> RequestExplanation:
    rd = RequestData(body, parent)
    result = RequestExplanation(claim=claim.key, request=rd.result_name,
                                device_class=body.get("deviceClassName") or "")
    klass = search.alloc.classes.get(result.device_class)
    if klass is None:
        return result
    class_sels = [(s.get("cel") or {}).get("expression") or "" for s in
                  (klass.get("spec") or {}).get("selectors") or ()]
    req_sels = [(s.get("cel") or {}).get("expression") or "" for s in
                body.get("selectors") or ()]
    result.selectors = [*class_sels, *req_sels]
    for pool in search.pools:
        for view in pool.slices:
            for dev in view.devices:
                verdict = _verdict(search, ci, rd, pool, view, dev, class_sels, req_sels,
                                   klass["metadata"]["name"], claim.key)
                if verdict is None:
                    result.matched.append("/".join(dev.key))
                else:
                    result.refused.append(verdict)
    return result


def _verdict(search, ci, rd, pool, view, dev, class_sels, req_sels, class_name, claim_key):
    ident = "/".join(dev.key)
    profile = search.profile
    if pool.incomplete:
        return DeviceVerdict(ident, "pool-incomplete")
    if pool.invalid:
        return DeviceVerdict(ident, "pool-invalid", error=pool.invalid_reason)
    owner = search.book.owner(dev.key)
    if owner is not None and not rd.admin:
        return DeviceVerdict(ident, "in-use", claim=owner)
    if dev.binding_conditions and not profile.binding_and_status:
        return DeviceVerdict(ident, "binding-conditions-disabled")
    for exprs, owner_text, reason in ((class_sels, f"class {class_name}",
                                       "class-selector-false"),
                                      (req_sels, f"claim {claim_key}",
                                       "request-selector-false")):
        for i, expression in enumerate(exprs):
            selector = selector_name(owner_text, i)
            try:
                ok = search.alloc.selector_result(dev, search.alloc.compiled(expression),
                                                  owner_text, i)
            except CelRuntimeError as exc:
                return DeviceVerdict(ident, "cel-error", expression=expression,
                                     selector=selector, key=_missing_key(exc.error),
                                     error=exc.error)
            except CelCompileError as exc:  # the same for every device
                return DeviceVerdict(ident, "cel-error", expression=expression,
                                     selector=selector, error=f"CEL compile error: {exc}")
            if not ok:
                return DeviceVerdict(ident, reason, expression=expression)
    if view.per_device and dev.name not in view.node_ok:
        return DeviceVerdict(ident, "not-on-node")
    if search.consumable:
        why = search.capacity_reason(rd, dev)
        if why:
            return DeviceVerdict(ident, "capacity", error=why,
                                 capacity=_CAPACITY_NAME.match(why).group(1))
    if dev.consumes:
        if not profile.partitionable_devices:
            return DeviceVerdict(ident, "counters-disabled")
        skip = (search.consumable and dev.multi_raw and dev.key in search.book.shared
                and profile.shared_skips_counter_check)
        short = None if skip else search.counters.short(pool, dev, consume=False)
        if short:
            set_name, counter, available, needed = short
            return DeviceVerdict(ident, "counters", counter_set=set_name, counter=counter,
                                 available=_num(available), needed=_num(needed))
    if profile.device_taints:
        taint = untolerated_taint(dev, rd.tolerations, profile.every_taint_blocks)
        if taint is not None:
            return DeviceVerdict(ident, "taint", taint=dict(taint))
    return None


# capacity.capacity_fits's reasons all start "capacity <name>: " or "capacity <name> is "
_CAPACITY_NAME = re.compile(r"capacity (\S+?)(?::| is )")
# cel-go's text for a missing map key (allocation/engine/cel/_library.py)
_NO_SUCH_KEY = re.compile(r"^no such key: (.+)$")


def _missing_key(error: str) -> str:
    found = _NO_SUCH_KEY.match(error)
    return found.group(1) if found else ""


def _num(value) -> str:
    return str(Quantity(value))


def _constraints(claim: ClaimState, raw: dict, requests: list[RequestExplanation],
                 devices: dict, sets: bool) -> None:
    """Move matched devices that no device of another covered request can accompany
    (``sets``: list-type attributes, compared as sets, ``attributes_meet``)."""
    mine = [r for r in requests if r.claim == claim.key]
    for con in raw["spec"]["devices"].get("constraints") or ():
        attr = con.get("matchAttribute") or con.get("distinctAttribute")
        if not attr:
            continue
        kind = "matchAttribute" if con.get("matchAttribute") else "distinctAttribute"
        names = set(con.get("requests") or ())
        covered = [r for r in mine if not names or r.request in names
                   or r.request.split("/")[0] in names]
        for r in covered:
            keep = []
            for ident in r.matched:
                dev = devices.get(ident)
                value = lookup_attribute(dev, attr) if dev is not None else None
                if value is None:
                    r.refused.append(DeviceVerdict(ident, "constraint",
                                                   constraint=f"{kind} {attr}"))
                    continue
                keep.append(ident)
            r.matched = keep
        if kind != "matchAttribute":
            _distinct(covered, attr, devices, sets)
            continue
        for r in covered:
            others = [o for o in covered if o is not r and o.request.split("/")[0]
                      != r.request.split("/")[0] and o.matched]
            if not others:
                continue
            keep = []
            for ident in r.matched:
                value = lookup_attribute(devices.get(ident), attr)
                partner = next((m for o in others for m in o.matched if attributes_meet(
                                    lookup_attribute(devices.get(m), attr), value, sets)),
                               None)
                if partner is None:
                    r.refused.append(DeviceVerdict(ident, "constraint",
                                                   constraint=f"{kind} {attr}",
                                                   against=others[0].matched[0]))
                else:
                    keep.append(ident)
            r.matched = keep


def _distinct(covered: list[RequestExplanation], attr: str, devices: dict,
              sets: bool) -> None:
    """distinctAttribute: refuse a matched device when another covered request can only
    use devices with the same value (every one of its matched devices has it)."""
    # (request, its only value, a device with it), taken before any device is moved
    only = []
    for r in covered:
        found = {lookup_attribute(devices.get(m), attr) for m in r.matched}
        if len(found) == 1:
            only.append((r, found.pop(), r.matched[0]))
    for r in covered:
        forced = [(value, device) for o, value, device in only
                  if o is not r and o.request.split("/")[0] != r.request.split("/")[0]]
        if not forced:
            continue
        keep = []
        for ident in r.matched:
            value = lookup_attribute(devices.get(ident), attr)
            against = next((d for v, d in forced if attributes_meet(v, value, sets)), None)
            if against is None:
                keep.append(ident)
            else:
                r.refused.append(DeviceVerdict(ident, "constraint",
                                               constraint=f"distinctAttribute {attr}",
                                               against=against))
        r.matched = keep
