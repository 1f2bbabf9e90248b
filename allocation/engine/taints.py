"""Taints and tolerations: Kubernetes' one matching rule, for node taints (kube-scheduler's
TaintToleration and NodeUnschedulable filters, docs/manifests.md "Node taints") and for
v1 device taints (KEP-5055, ``v1/taints.py``).

The rule is ``Toleration.ToleratesTaint`` (k8s.io/api core/v1 ``toleration.go``): an empty
effect or key in the toleration matches every effect or key, ``Exists`` matches every
value, ``Equal`` (the default) the taint's value exactly. The comparison operators ``Lt``
and ``Gt`` (TaintTolerationComparisonOperators, alpha from 1.35, off) match nothing, as
upstream with the gate off; any other operator likewise.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["BLOCKING_EFFECTS", "UNSCHEDULABLE_TAINT", "tolerates", "untolerated",
           "cordon_refuses", "taint_text"]

BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
"""The effects that keep a pod off (``helper.DoNotScheduleTaintsFilterFunc``);
``PreferNoSchedule`` only lowers a node's score."""

UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
"""The taint a cordoned node stands for: a pod tolerating it may still be placed there
(kube-scheduler's NodeUnschedulable filter)."""
_CORDONED = (UNSCHEDULABLE_TAINT,)


def tolerates(toleration: dict, taint: dict) -> bool:
    """Whether ``toleration`` tolerates ``taint`` (``Toleration.ToleratesTaint``).

    Returns:
        True when the effect, key and value match under the toleration's operator.
    """
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def untolerated(taints: Iterable[dict], tolerations: Iterable[dict],
                every_effect: bool = False) -> dict | None:
    """The first of ``taints`` with a blocking effect that no toleration tolerates
    (``FindMatchingUntoleratedTaint`` with the NoSchedule/NoExecute filter); with
    ``every_effect`` the first of any effect.

    Returns:
        The taint, or None when every such taint is tolerated.
    """
    for taint in taints:
        if (every_effect or taint.get("effect") in BLOCKING_EFFECTS) and not any(
                tolerates(t, taint) for t in tolerations):
            return taint
    return None


def cordon_refuses(tolerations: Iterable[dict]) -> bool:
    """Whether a cordoned node (``spec.unschedulable``) refuses a pod with ``tolerations``:
    unless one tolerates :data:`UNSCHEDULABLE_TAINT` (NodeUnschedulable's Filter).

    Returns:
        True when the pod may not be placed on a cordoned node.
    """
    return untolerated(_CORDONED, tolerations) is not None


def taint_text(taint: dict) -> str:
    """``key=value:Effect`` (``key:Effect`` without a value), as ``kubectl taint`` writes it.

    Returns:
        The taint in one word.
    """
    value = taint.get("value")
    return f"{taint.get('key', '')}{'=' + value if value else ''}:{taint.get('effect', '')}"
