"""The scheduling vocabulary: why a node refuses a pod, and the summary a pod gets.

The node reasons are kube-scheduler's terse texts (and the planner's own for DRA); they are
the keys of the ``draplanner.io/explain`` annotation's ``nodes[].reason`` and of the
console's explanations (``allocation/presenters/explain.py``), so each is written once,
here. The waiting texts are the pod's condition while drivers negotiate (KEP-3063).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from allocation.engine.constants import CANNOT_ALLOCATE

if TYPE_CHECKING:
    from allocation.engine.objects import ResourceClaim

__all__ = [
    "R_UNSCHEDULABLE", "R_SELECTOR", "R_CPU", "R_MEMORY", "R_PODS", "R_CLAIMS", "R_ELSEWHERE",
    "R_CLASS", "R_BUDGET", "R_UNSUITABLE", "FITS_NOW", "CLAIM_REASONS", "WAIT_INFORMATION",
    "WAIT_ALLOCATION", "WAIT_IMMEDIATE", "MAX_DETAIL_NODES", "summary", "detail_of",
    "missing_controller", "FILTER_ERROR", "R_TAINT", "taint_reason", "is_node_reason",
    "R_INSUFFICIENT", "insufficient", "REASON_SEPARATOR", "joined",
]

R_UNSCHEDULABLE = "node(s) were unschedulable"
R_SELECTOR = "node(s) didn't match Pod's node affinity/selector"
R_TAINT = "node(s) had untolerated taint"
"""TaintToleration's refusal; the reason itself names the taint (:func:`taint_reason`)."""
R_INSUFFICIENT = "Insufficient "
"""NodeResourcesFit's refusal, before the resource's name (:func:`insufficient`)."""
R_CPU = "Insufficient cpu"
R_MEMORY = "Insufficient memory"
R_PODS = "Too many pods"
R_CLAIMS = CANNOT_ALLOCATE
"""DynamicResources Filter's refusal (upstream verbatim; docs/v1.md, "Texts and upstream")."""
R_ELSEWHERE = "node(s) had resource claims allocated on other nodes"
FILTER_ERROR = 'running "DynamicResources" filter plugin: '
"""How kube-scheduler prefixes a Filter plugin's error in the pod's SchedulerError
condition and FailedScheduling Event (a fatal allocator error, spec section 6)."""
R_CLASS = "node(s) didn't match the resource class's suitable nodes"
R_BUDGET = "allocation search gave up (step budget exhausted)"
R_UNSUITABLE = "node(s) were reported unsuitable by the resource driver"
FITS_NOW = "fits now"
"""A node that fits when the explanation is written (the cluster changed meanwhile)."""
CLAIM_REASONS = (R_CLAIMS, R_BUDGET)
"""The reasons that a per-request explanation of the node's inventories can detail."""

WAIT_INFORMATION = "waiting for resource driver to provide information"
WAIT_ALLOCATION = "waiting for resource driver to allocate resource"
WAIT_IMMEDIATE = "waiting for resource driver to allocate a claim with Immediate allocation"

_NODE_REASONS = frozenset((R_UNSCHEDULABLE, R_SELECTOR))
_NODE_PREFIXES = (R_TAINT, R_INSUFFICIENT, R_PODS)
"""Of a taint's reason, which names it, and of NodeResourcesFit's, alone or the first of
several joined (``Too many pods; Insufficient cpu``)."""

MAX_DETAIL_NODES = 8
"""Nodes detailed in the explain annotation; the rest are only counted."""


def taint_reason(taint: dict) -> str:
    """TaintToleration's reason for ``taint``, verbatim: ``node(s) had untolerated taint
    {key: value}`` (Go's ``{%s: %s}``, so an empty value leaves ``{key: }``)."""
    return f"{R_TAINT} {{{taint.get('key') or ''}: {taint.get('value') or ''}}}"


REASON_SEPARATOR = "; "
"""Between the reasons of one node that fails one filter in several ways (NodeResourcesFit:
``Insufficient cpu; Insufficient memory``); :func:`summary` counts each."""


def joined(parts: list[str]) -> str:
    """One node's reasons as one (:data:`REASON_SEPARATOR`): the explain annotation's
    reason; :func:`summary` counts each part, as kube-scheduler's ``FitError`` counts every
    reason of a node's status."""
    return REASON_SEPARATOR.join(parts)


def insufficient(resource: str) -> str:
    """NodeResourcesFit's reason for ``resource``: ``Insufficient example.com/gpu``."""
    return R_INSUFFICIENT + resource


def is_node_reason(reason: str) -> bool:
    """Whether ``reason`` is a refusal by the node's own checks (``fit.node_refusal``'s
    first part: cordon, taints, selectors, resources, pod count), not by the claims."""
    return reason in _NODE_REASONS or reason.startswith(_NODE_PREFIXES)


def summary(counts: Mapping[str, int], total: int, end: str = ".") -> str:
    """``0/N nodes are available: 1 other, 2 reason.``: upstream's ``FitError.Error()``
    (pkg/scheduler/framework/types.go), whose histogram entries ``"<count> <reason>"`` are
    sorted as whole strings (``sort.Strings``), so ``1 b`` precedes ``2 a`` and ``10 x``
    precedes ``2 y`` (docs/v1.md, "Texts and upstream").

    Returns:
        kube-scheduler's one-line summary; ``end`` closes it (the autoscaler adds more).
    """
    if any(REASON_SEPARATOR in r for r in counts):  # a node with several reasons
        each: dict[str, int] = {}
        for reason, n in counts.items():
            for part in reason.split(REASON_SEPARATOR):
                each[part] = each.get(part, 0) + n
        counts = each
    parts = sorted(f"{n} {r}" for r, n in counts.items())
    message = f"0/{total} nodes are available"
    return message + ((": " + ", ".join(parts) + end) if parts else end)


def detail_of(details: list[dict], total: int) -> dict:
    """The explain annotation's body besides the summary: detailed and omitted nodes."""
    detail: dict = {"nodes": details}
    if total > len(details):
        detail["omittedNodes"] = total - len(details)
    return detail


def missing_controller(claim: ResourceClaim, class_name: str, controller: str) -> str:
    """Why a claim whose class names a controller without a DriverSimulation stays pending."""
    return (f"resourceclaim \"{claim.ref}\": class {class_name!r} names control-plane "
            f"controller {controller}, which no DriverSimulation simulates")
