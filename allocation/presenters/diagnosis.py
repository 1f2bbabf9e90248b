"""What a pending pod's page shows beyond its explain annotation: every filter on every node
(``engine.scheduling.checks``), nearest first, and the what-if suggestions
(``engine.autoscaler.suggest``), both computed here from the page's state when the page
asks, never by the scheduler (docs/console-pages.md, "Pod").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from allocation.engine.autoscaler.suggest import what_if
from allocation.engine.scheduling.checks import PLUGINS, pod_checks
from allocation.engine.scheduling.diagnosis import NEAREST
from allocation.engine.scheduling.diagnosis_text import diff_texts, suggestion_text
from allocation.presenters.common import object_url

if TYPE_CHECKING:
    from allocation.engine.objects import Pod
    from allocation.engine.state import ClusterState

__all__ = ["CheckCell", "CheckRow", "Diagnosis", "pod_diagnosis"]


@dataclass(frozen=True, slots=True)
class CheckCell:
    """One filter on one node: passed, or what failed in words."""

    plugin: str
    passed: bool
    texts: list[str]


@dataclass(frozen=True, slots=True)
class CheckRow:
    node: str
    node_url: str | None
    cells: list[CheckCell]
    fits: bool
    devices: list[str]  # what each request finds there, failed or not


@dataclass(slots=True)
class Diagnosis:
    """The pod page's checks table and what-if suggestions."""

    plugins: tuple[str, ...] = PLUGINS
    rows: list[CheckRow] = field(default_factory=list)
    error: str | None = None
    omitted: int = 0
    suggestions: list[str] = field(default_factory=list)


def pod_diagnosis(state: ClusterState, pod: Pod) -> Diagnosis:
    """Every filter of a pending ``pod`` on each node (ranked by what it lacks) and the
    suggestions a simulation confirms for the nearest nodes.

    Returns:
        The table, or its ``error`` when the pod's claims refuse it before any node.
    """
    checks = pod_checks(state, pod)
    out = Diagnosis(error=checks.error, omitted=checks.omitted)
    for row in checks.rows:
        cells = [CheckCell(p, not row.failed[p], diff_texts(row.failed[p])) for p in PLUGINS]
        out.rows.append(CheckRow(row.node, object_url("Node", None, row.node), cells,
                                 row.fits, diff_texts(row.devices) if row.devices else []))
    if checks.error is None:
        nearest = [row.node for row in checks.rows if not row.fits][:NEAREST]
        out.suggestions = [suggestion_text(s) for s in what_if(state, pod, nearest)]
    return out
