"""Device taints and tolerations (KEP-5055, docs/v1.md): the matching rule is the one of
node taints (``allocation.engine.taints``)."""

from __future__ import annotations

from allocation.engine.taints import untolerated

__all__ = ["untolerated_taint"]


def untolerated_taint(device, tolerations, every_effect: bool = False) -> dict | None:
    """The first NoSchedule/NoExecute taint of ``device`` no toleration tolerates; with
    ``every_effect`` ([1.34] allTaintsTolerated) the first of any effect.

    Returns:
        The taint, or None.
    """
    return untolerated(device.taints, tolerations, every_effect)
