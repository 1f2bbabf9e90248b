"""Device taints and tolerations (KEP-5055, docs/v1.md)."""

from __future__ import annotations

__all__ = ["tolerates", "untolerated_taint"]

_BLOCKING = ("NoSchedule", "NoExecute")


def tolerates(toleration: dict, taint: dict) -> bool:
    """Whether ``toleration`` tolerates ``taint`` (resourceclaim.ToleratesTaint)."""
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


def untolerated_taint(device, tolerations, every_effect: bool = False) -> dict | None:
    """The first NoSchedule/NoExecute taint of ``device`` no toleration tolerates; with
    ``every_effect`` ([1.34] allTaintsTolerated) the first of any effect."""
    for taint in device.taints:
        if (every_effect or taint.get("effect") in _BLOCKING) and not any(
                tolerates(t, taint) for t in tolerations):
            return taint
    return None
