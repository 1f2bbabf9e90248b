"""What a pending pod would have to change to fit: for each node, the smallest differences
between what the pod asks and what the node has; the nodes that fail by the least; and the
suggestions those differences make (docs/manifests.md, "The explanation").

kube-scheduler's FitError names one refusing filter per node, and the planner's node checks
(``fit.node_refusal``) stop at the first that fails. A node's *diff* lists every check it
fails, each an item with what the pod wants and what the node has::

    {"check": "nodeSelector", "key": "gpu", "wants": "h100", "has": "a100"}
    {"check": "devices", "class": "t4", "request": "requests[0]", "wants": 3, "free": 2}

Checks: ``cordoned``; ``nodeSelector`` (``key``, ``wants``, ``has`` unless the label is
missing); ``nodeAffinity`` (``term``, and that term's first unmet requirement: ``key``,
``operator``, ``values``, ``has``); ``cpu`` and ``memory`` (``wants``, ``free``);
``pods`` (``max``); ``claimElsewhere``; ``claimUnready`` (``claims``: allocated claims
whose binding failed or timed out); ``suitableNodes``; ``devices`` (``class``,
``request``, ``wants``, ``free``: one item per set of alike requests, so a claim asking for
three alike devices is one item wanting 3, not three items); ``together`` (every request
has enough free devices, but the search found no way to meet them all at once);
``budget`` (the search gave up); on the pod page only (``checks.py``), ``other``
(``reason``: a refusal with no diff of its own). Words for each: ``diagnosis_text``.

The node checks mirror ``fit.node_refusal`` (the same rules in the same order; a test holds
the first failing check equal to the refusal), which stays the scheduler's fast path: this
module runs only for pods that stay pending, once per pod signature (the seed's placement
cache and the v1 scheduler's per-pass failures hold its result), and device diffs are read
from the request entries the explanation has already made. :func:`annotate` adds ``diff``
to the annotation's detailed nodes, ``nearest`` and ``suggestions``.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING

from allocation.engine.labels import node_selector_matches, unmet_requirement
from allocation.engine.models.base import HELD
from allocation.engine.quantity import Quantity
from allocation.engine.scheduling.diagnosis_devices import shortfall
from allocation.engine.scheduling.fit import other_shortfalls
from allocation.engine.scheduling.reasons import (
    R_BUDGET,
    R_CLASS,
    R_ELSEWHERE,
    is_node_reason,
)
from allocation.engine.taints import cordon_refuses, taint_text, untolerated
from allocation.engine.v1 import NOT_AVAILABLE, TIMED_OUT

if TYPE_CHECKING:
    from allocation.engine.objects import Node, Pod
    from allocation.engine.scheduling.diagnosis_devices import Devices
    from allocation.engine.state import ClusterState

__all__ = ["NEAREST", "EXTRA_DIAGNOSED", "v1_reasons", "node_diff", "claim_diff", "rank",
           "annotate"]

NEAREST = 3
"""Nodes in the annotation's ``nearest``."""
EXTRA_DIAGNOSED = 8
"""Nodes refused for their claims, beyond the detailed ones, whose devices are diagnosed
for ``nearest`` (the rest are left out of it; the pod page ranks every node)."""
_ELSEWHERE = frozenset((R_ELSEWHERE, NOT_AVAILABLE))
# the search stopped before it tried every combination: the seed's step budget, v1's
# Filter timeout
_GAVE_UP = frozenset((R_BUDGET, TIMED_OUT))
_PLACEMENT = ("nodeSelector", "nodeAffinity")
_MAX_VALUES = 8  # label values a ``label`` suggestion lists


def v1_reasons(answers: Mapping[str, tuple] | None, details: list[dict]) -> dict[str, str]:
    """The v1 scheduler's refusal per node: from its per-node ``answers`` (node name ->
    (node state, refusal)) of the failed scan, else the detailed nodes' (``details``)."""
    if answers:
        return {name: answer[1] for name, answer in answers.items()}
    return {entry["node"]: entry["reason"] for entry in details}


def node_diff(state: ClusterState, pod: Pod, node: Node) -> list[dict]:
    """Every node check ``pod`` fails on ``node`` (``fit.node_refusal``'s, in its order).

    Returns:
        The diff items; empty when the node's own checks pass.
    """
    items: list[dict] = []
    if node.unschedulable and cordon_refuses(pod.tolerations):
        items.append({"check": "cordoned"})
    if node.taints:
        taint = untolerated(node.taints, pod.tolerations)
        if taint is not None:
            items.append({"check": "taint", "taint": taint_text(taint)})
    labels = node.meta.labels
    for key, value in sorted(pod.node_selector.items()):
        has = labels.get(key)
        if has != value:
            items.append(_has({"check": "nodeSelector", "key": key, "wants": value}, has))
    if pod.node_affinity and not node_selector_matches(pod.node_affinity, node):
        for term, body in enumerate(pod.node_affinity.get("nodeSelectorTerms") or ()):
            unmet = unmet_requirement(body, node)
            if unmet is not None:
                requirement, has = unmet
                item = {"check": "nodeAffinity", "term": term}
                if requirement:
                    item.update(key=requirement["key"], operator=requirement["operator"],
                                values=list(requirement.get("values") or ()))
                items.append(_has(item, has))
    used = state.usage_of(node.name)
    if used.pods + 1 > node.max_pods:  # NodeResourcesFit's order: pods, cpu, memory, others
        items.append({"check": "pods", "max": node.max_pods})
    if pod.cpu_milli and node.cpu_milli is not None \
            and used.cpu_milli + pod.cpu_milli > node.cpu_milli:
        items.append({"check": "cpu", "wants": _cpu(pod.cpu_milli),
                      "free": _cpu(node.cpu_milli - used.cpu_milli)})
    if pod.memory and node.memory is not None and used.memory + pod.memory > node.memory:
        items.append({"check": "memory", "wants": str(Quantity(pod.memory)),
                      "free": str(Quantity(max(node.memory - used.memory, 0)))})
    if pod.other_requests:
        for name, wants, free in other_shortfalls(state, pod, node, used.other):
            items.append({"check": "resource", "resource": name, "wants": str(Quantity(wants)),
                          "free": str(Quantity(max(free, 0)))})
    return items


def _has(item: dict, has: str | None) -> dict:
    if has is not None:
        item["has"] = has
    return item


def _cpu(milli: int) -> str:
    return str(Quantity(Fraction(max(milli, 0), 1000)))


def claim_diff(reason: str, entries: list[dict] | None, devices: Devices) -> list[dict]:
    """The diff of a node refused for the pod's claims (``reason``), its devices read from
    the node's request ``entries`` (None: not diagnosed).

    Returns:
        The diff items; empty when the reason has none.
    """
    if reason in _ELSEWHERE:
        unready = devices.unready()
        return ([{"check": "claimUnready", "claims": unready}] if unready
                else [{"check": "claimElsewhere"}])
    if reason == R_CLASS:
        return [{"check": "suitableNodes"}]
    if reason not in devices.explained or entries is None:
        return []
    items = devices.items(entries)
    if reason in _GAVE_UP:
        items.append({"check": "budget"})
    elif items and not any(shortfall(i) for i in items):
        items.append({"check": "together"})
    return items


def rank(diff: list[dict]) -> tuple[int, int, int]:
    """How far a node is from fitting, smallest first: how many of the pod's own placement
    rules it breaks (nodeSelector pairs, node affinity terms: a node the pod does not target
    is farther than any node it does), then how many other checks it fails (``together``
    and ``budget`` only when nothing else is short), then how many devices it lacks."""
    placement = sum(1 for i in diff if i["check"] in _PLACEMENT)
    checks = sum(1 for i in diff if i["check"] not in (*_PLACEMENT, "together", "budget")
                 and (i["check"] != "devices" or shortfall(i)))
    if not placement and not checks:
        checks = 1  # refused all the same: devices enough for each request, not together
    return (placement, checks, sum(shortfall(i) for i in diff if i["check"] == "devices"))


def annotate(body: dict, state: ClusterState, pod: Pod, reasons: Mapping[str, str],
             devices: Devices) -> dict:
    """Add to an explain annotation's ``body`` (``reasons.detail_of``'s) each detailed
    node's ``diff``, the ``nearest`` nodes (``{node}``, with ``diff`` when the node is not
    detailed) and ``suggestions`` (``label``, ``nodeAffinity``, ``selector``; see
    ``diagnosis_text.suggestion_text``), each only when not empty.

    ``reasons`` maps node names to the scheduler's refusal; nodes refused for their claims
    that are not detailed are diagnosed up to :data:`EXTRA_DIAGNOSED`, the others are not
    ranked. Nothing names the pod's claims, so the body suits every pod of its signature.

    Returns:
        ``body``, changed in place.
    """
    detailed = {entry.get("node"): entry for entry in body.get("nodes") or ()}
    diffs: dict[str, list[dict]] = {}
    examined: list[list[dict]] = []
    extra = EXTRA_DIAGNOSED
    for name in state.node_order:
        reason = reasons.get(name)
        if reason is None:
            continue
        entry = detailed.get(name)
        if is_node_reason(reason):  # the refusals node_diff explains
            diff = node_diff(state, pod, state.nodes[name])
        else:
            entries = entry.get("requests") if entry is not None else None
            if entries is None and reason in devices.explained and extra:
                extra -= 1
                entries = devices.entries(name)
            diff = claim_diff(reason, entries, devices)
            if entries and reason in devices.explained:
                examined.append(entries)
        if not diff:
            continue
        diffs[name] = diff
        if entry is not None:
            entry["diff"] = diff
    order = {name: index for index, name in enumerate(diffs)}
    nearest = sorted(diffs, key=lambda name: (rank(diffs[name]), order[name]))[:NEAREST]
    if nearest:
        body["nearest"] = [{"node": name} if name in detailed else
                           {"node": name, "diff": diffs[name]} for name in nearest]
    suggestions = [*_label_suggestions(state, pod, diffs.values()),
                   *_blocker_suggestions(examined, devices)]
    if suggestions:
        body["suggestions"] = suggestions
    return body


def _label_suggestions(state: ClusterState, pod: Pod, diffs) -> list[dict]:
    """``label``: a nodeSelector pair no node has; ``nodeAffinity``: no node satisfies
    the required node affinity (only looked for when a diff shows them); ``nodeTaint``: a
    node taint the pod does not tolerate, with the number of nodes it keeps the pod off."""
    checks: set[str] = set()
    tainted: dict[str, int] = {}
    for diff in diffs:
        for item in diff:
            checks.add(item["check"])
            if item["check"] == "taint":
                tainted[item["taint"]] = tainted.get(item["taint"], 0) + 1
    out: list[dict] = [{"kind": "nodeTaint", "taint": taint, "nodes": count}
                       for taint, count in sorted(tainted.items())]
    nodes = [state.nodes[name] for name in state.node_order]
    if "nodeSelector" in checks:
        for key, value in sorted(pod.node_selector.items()):
            seen = {node.meta.labels.get(key) for node in nodes} - {None}
            if value not in seen:
                out.append({"kind": "label", "key": key, "wants": value,
                            "values": sorted(seen)[:_MAX_VALUES]})
    if "nodeAffinity" in checks and not any(
            node_selector_matches(pod.node_affinity, node) for node in nodes):
        out.append({"kind": "nodeAffinity"})
    return out


def _blocker_suggestions(examined: list[list[dict]], devices: Devices) -> list[dict]:
    """``selector``: a request no diagnosed node could meet because one of its selectors
    is false for every device there that is not in use (devices in use are refused before
    their selectors are read, upstream's order too); ``toleration``: because every such
    device has one taint the request does not tolerate (v1 device taints, KEP-5055)."""
    found: dict[tuple, dict] = {}
    spoilt: set[tuple] = set()
    for index, entries in enumerate(examined):
        for entry in entries:
            selectors = tuple(entry.get("selectors") or ())
            key = (entry.get("class") or entry.get("driver"), selectors)
            if key in spoilt or entry.get("problem"):
                continue
            blockers = _blockers(entry, selectors)
            if blockers is None:
                spoilt.add(key)
                found.pop(key, None)
                continue
            known = found.setdefault(key, {"entry": entry, "by": set(), "nodes": set()})
            known["by"].update(blockers)
            known["nodes"].add(index)
    out = []
    for known in found.values():
        if len(known["by"]) == 1:
            [(kind, what)] = known["by"]
            item = devices.items([known["entry"]])[0]
            out.append({"kind": kind, "class": item["class"], "request": item["request"],
                        "selector" if kind == "selector" else "taint": what,
                        "nodes": len(known["nodes"])})
    return out


def _blockers(entry: dict, selectors: tuple) -> set[tuple[str, str]] | None:
    """What refused the free devices of one request entry (``("selector", expression)``,
    ``("toleration", taint)``), or None when a device matched, one was refused otherwise,
    or some were not listed."""
    if entry.get("matching") or entry.get("matchingMore") or entry.get("refusedMore"):
        return None
    by = set()
    for group in entry.get("refused") or ():
        reason = str(group.get("reason", ""))
        if group.get("code") == "in-use" or reason.startswith(HELD):
            continue
        if group.get("code") == "taint":  # "untolerated taint k=v:Effect"
            by.add(("toleration", reason.rpartition(" ")[2]))
            continue
        selector = next((s for s in selectors if reason.endswith(f"`{s}` is false")), None)
        if selector is None:
            return None
        by.add(("selector", selector))
    return by
