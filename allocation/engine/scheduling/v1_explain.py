"""The ``draplanner.io/explain`` annotation of a pod with resource.k8s.io/v1 claims.

The seed scheduler's annotation (``reasons.detail_of``, ``fit.node_detail``, docs/manifests.md
"The explanation") is the shape: ``summary``, ``nodes`` (at most ``MAX_DETAIL_NODES``, in
the scheduler's order) and ``omittedNodes``; a node refused because of its claims gets
``requests``, one entry per request or subrequest of the pod's unallocated claims, with the
devices that match and the refused ones grouped by reason. The verdicts come from
``allocation.engine.v1.explain``; this module words them (each text once, here) and keeps
the annotation bounded. A fatal allocator error (spec section 6) gives the condition reason
``SchedulerError``, a message naming the claim, request, device, expression and error, and
the same fields as the annotation's ``error``. docs/v1.md "Explanations" has the format.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from allocation.engine.faults import SCHEDULER_ERROR
from allocation.engine.scheduling import binding
from allocation.engine.scheduling.reasons import (
    FILTER_ERROR,
    MAX_DETAIL_NODES,
    R_CLAIMS,
    detail_of,
)
from allocation.engine.taints import taint_text
from allocation.engine.v1 import INVALID_POOLS, TIMED_OUT, AllocationError, CelRuntimeError
from allocation.engine.v1.explain import DeviceVerdict, RequestExplanation, explain_requests

if TYPE_CHECKING:
    from allocation.engine.objects import Node, Pod, ResourceClaimV1
    from allocation.engine.state import ClusterState
    from allocation.engine.v1 import Allocator, UnschedulableError

__all__ = ["EXPLAINED_REASONS", "MAX_MATCHING", "MAX_CANDIDATES", "MAX_GROUPS",
           "MAX_REQUESTS", "RequestMemo", "detail", "mark_failed", "pending_refs",
           "request_entry", "verdict_text"]

EXPLAINED_REASONS = (R_CLAIMS, INVALID_POOLS, TIMED_OUT)
"""Node reasons whose requests the annotation details (the claims, not the node, said no)."""
MAX_MATCHING = 16
"""Matching devices listed per request; the rest are counted in ``matchingMore``."""
MAX_CANDIDATES = 8
"""Devices listed per refusal group; the rest are counted in the group's ``more``."""
MAX_GROUPS = 8
"""Refusal groups per request; the devices of the rest are counted in ``refusedMore``."""
MAX_REQUESTS = 16
"""Request entries per node; the rest are counted in the node's ``omittedRequests``."""


class RequestMemo:
    """A node's ``requests`` entries for pending claims, reused for claims with the same
    namespace and specs while the node's state is the same (the pending pods of one
    template differ only in their claims' names; explaining each again was most of a
    pass with many pending pods, docs/v1.md "Speed").

    ``node_state(state, allocator, name)`` is what a node's verdicts depend on (the
    scheduler's node, usage and pool versions) and ``same(before, now)`` compares two of
    them; both are for one allocator, so the memo forgets everything when the allocator
    is another. Entries are reused only when the claims' names (``ref``, as the verdicts
    name them) appear nowhere but in their ``claim`` (a CEL error may quote them), so
    the reused entries are byte-identical to explaining again.
    """

    def __init__(self, node_state: Callable[[ClusterState, Allocator, str], tuple],
                 same: Callable[[tuple, tuple], bool]) -> None:
        self.node_state, self.same = node_state, same
        self.allocator: Allocator | None = None
        # (node name, (namespace, spec) per claim) -> (node state, entries, the index of
        # each entry's claim or None when not reusable, omitted)
        self.entries: dict[tuple, tuple[tuple, list[dict], tuple | None, int]] = {}

    def requests(self, state: ClusterState, allocator: Allocator,
                 claims: list[ResourceClaimV1], name: str) -> tuple[list[dict], int]:
        """The node's request entries for the pod's unallocated ``claims`` and how many
        were left out (at most MAX_REQUESTS entries).

        Returns:
            JSON-ready entries, each a new dict whose lists and dicts may be shared with
            the memo (read them, never change them), and the omitted count.
        """
        if allocator is not self.allocator:
            self.allocator, self.entries = allocator, {}
        mine = [c for c in claims if not c.allocated]
        key = (name, *((c.namespace, c.spec_key) for c in mine))
        now = self.node_state(state, allocator, name)
        known = self.entries.get(key)
        if known is not None and known[2] is not None and self.same(known[0], now):
            pairs = zip(known[1], known[2], strict=True)
            return [{**e, "claim": mine[i].ref} for e, i in pairs], known[3]
        entries, omitted = _requests(state, allocator, _pending(mine), name)
        self.entries[key] = (now, entries, _claim_indexes(entries, [c.ref for c in mine]),
                             omitted)
        return entries, omitted


def _claim_indexes(entries: list[dict], names: list[str]) -> tuple | None:
    """The index in ``names`` of each entry's ``claim``, or None when a name appears
    anywhere else in the entries (then it could not be substituted)."""
    index = {name: i for i, name in enumerate(names)}
    if len(index) != len(names) or any(e["claim"] not in index for e in entries):
        return None
    rest = json.dumps([{**e, "claim": ""} for e in entries])
    if any(json.dumps(n)[1:-1] in rest for n in names):
        return None
    return tuple(index[e["claim"]] for e in entries)


def pending_refs(claims: list[ResourceClaimV1]) -> list[str]:
    """The ``namespace/name`` of each of ``claims`` not allocated yet: the names an
    annotation's request entries give (``renaming``)."""
    return [c.ref for c in claims if not c.allocated]


def detail(state: ClusterState, allocator: Allocator, claims: list[ResourceClaimV1],
           details: list[dict], total: int, memo: RequestMemo | None = None,
           extended: Callable[[str], dict | None] | None = None) -> dict:
    """The annotation's body for a pod no node takes: ``details`` (the scheduler's
    ``{"node", "reason"}`` entries) with ``requests`` where claims were the reason
    (from ``memo`` when it knows them). ``extended(node name)`` is the claim the pod's
    extended resources would get on that node (``v1_extended.claim_view``; None: none
    there), explained after the pod's own claims.

    Returns:
        ``reasons.detail_of`` of the completed entries.
    """
    pending = None
    details = [dict(entry) for entry in details]  # the scheduler may reuse its entries
    for entry in details:
        if entry["reason"] in EXPLAINED_REASONS:
            view = extended(entry["node"]) if extended is not None else None
            if memo is None or view is not None:  # (the memo knows claims, not views)
                pending = pending if pending is not None else _pending(claims)
                _add_requests(state, allocator, [*pending, view] if view else pending, entry)
                continue
            entry["requests"], omitted = memo.requests(state, allocator, claims,
                                                       entry["node"])
            if omitted:
                entry["omittedRequests"] = omitted
    return detail_of(details, total)


def mark_failed(state: ClusterState, allocator: Allocator, pod: Pod,
                claims: list[ResourceClaimV1], error: AllocationError | UnschedulableError,
                node: str, details: list[dict], total: int) -> bool:
    """Record an allocator error raised while trying ``node``.

    An UnschedulableError (a missing class) is the same on every node: ``Unschedulable``
    with ``0/N nodes are available: <error>.``. An AllocationError ends the attempt as
    upstream's does, with ``SchedulerError`` and kube-scheduler's ``FILTER_ERROR`` prefix;
    the message and the annotation's ``error`` name the claim, request, device, expression
    and error of a CEL runtime error, and the node gets its per-request verdicts.

    Returns:
        False, as ``binding.mark_unschedulable``.
    """
    if not isinstance(error, AllocationError):
        return binding.mark_unschedulable(
            state, pod, f"0/{total} nodes are available: {error}.", {})
    if isinstance(error, CelRuntimeError):
        message, fields = error.detail, error.fields()
    else:
        message, fields = str(error), {"error": str(error)}
    entry = {"node": node, "reason": str(error)}
    _add_requests(state, allocator, _pending(claims), entry)
    body = detail_of([*details[:MAX_DETAIL_NODES - 1], entry], total)
    body["error"] = fields
    return binding.mark_unschedulable(state, pod, FILTER_ERROR + message, body,
                                      reason=SCHEDULER_ERROR)


def _pending(claims: list[ResourceClaimV1]) -> list[dict]:
    """The claims the allocator was asked for (the unallocated ones), as v1 documents."""
    return [c.as_v1() for c in claims if not c.allocated]


def _add_requests(state: ClusterState, allocator: Allocator, pending: list[dict],
                  entry: dict) -> None:
    entry["requests"], omitted = _requests(state, allocator, pending, entry["node"])
    if omitted:
        entry["omittedRequests"] = omitted


def _requests(state: ClusterState, allocator: Allocator, pending: list[dict],
              name: str) -> tuple[list[dict], int]:
    """The node's request entries (at most MAX_REQUESTS) and how many were left out."""
    node: Node = state.nodes[name]
    requests = explain_requests(allocator, node.to_manifest(), pending)
    return ([request_entry(r) for r in requests[:MAX_REQUESTS]],
            max(0, len(requests) - MAX_REQUESTS))


def request_entry(request: RequestExplanation) -> dict:
    """One request's entry: ``claim``, ``request`` (``req`` or ``req/sub``), ``class``,
    ``selectors``, ``matching`` and ``refused`` (``[{reason, code, candidates, more?}]``,
    groups in the order of their first device), bounded as the module's constants say.

    Returns:
        A JSON-ready dict; counts of what was left out only when something was.
    """
    entry: dict = {"claim": request.claim, "request": request.request,
                   "class": request.device_class, "selectors": list(request.selectors),
                   "matching": request.matched[:MAX_MATCHING], "refused": []}
    if len(request.matched) > MAX_MATCHING:
        entry["matchingMore"] = len(request.matched) - MAX_MATCHING
    groups: dict[str, dict] = {}
    left_out = 0
    for verdict in request.refused:
        text = verdict_text(verdict)
        group = groups.get(text)
        if group is None:
            if len(groups) == MAX_GROUPS:
                left_out += 1
                continue
            group = groups[text] = {"reason": text, "code": verdict.reason, "candidates": []}
        if len(group["candidates"]) < MAX_CANDIDATES:
            group["candidates"].append(verdict.device)
        else:
            group["more"] = group.get("more", 0) + 1
    entry["refused"] = list(groups.values())
    if left_out:
        entry["refusedMore"] = left_out
    return entry


# The sentence of each verdict reason (allocation.engine.v1.explain.REASONS).
_TEXTS = {
    "pool-incomplete": lambda v: ("its resource pool is incomplete (slices still being "
                                  "published), so it is not allocated from"),
    "pool-invalid": lambda v: f"its resource pool is invalid: {v.error}",
    "in-use": lambda v: f"allocated to claim {v.claim}",
    "binding-conditions-disabled": lambda v: ("it has binding conditions, but "
                                              "DRADeviceBindingConditions is off"),
    "class-selector-false": lambda v: f"class selector `{v.expression}` is false",
    "request-selector-false": lambda v: f"request selector `{v.expression}` is false",
    "cel-error": lambda v: f"{v.selector} `{v.expression}` failed: {v.error}",
    "not-on-node": lambda v: ("the device is not available on this node "
                              "(per-device node selection)"),
    "capacity": lambda v: v.error,
    "counters-disabled": lambda v: ("it consumes shared counters, but "
                                    "DRAPartitionableDevices is off"),
    "counters": lambda v: (f"not enough of counter {v.counter} in set {v.counter_set}: "
                           f"{v.available} left, needs {v.needed}"),
    "taint": lambda v: f"untolerated taint {taint_text(v.taint or {})}",
    "constraint": lambda v: _constraint(v),
}


def verdict_text(verdict: DeviceVerdict) -> str:
    """Why one device was refused, in the words of the annotation (and the console).

    Returns:
        One short sentence; devices with the same text are grouped.
    """
    text = _TEXTS.get(verdict.reason)
    return text(verdict) if text else verdict.reason


def _constraint(v: DeviceVerdict) -> str:
    if not v.against:
        return f"{v.constraint}: the device has no such attribute"
    if v.constraint.startswith("distinctAttribute"):
        return (f"{v.constraint}: another request can only use a device with the same "
                f"value ({v.against})")
    return f"{v.constraint}: no device of the other requests has the same value (e.g. {v.against})"
