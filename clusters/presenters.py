"""What the dashboard shows about the live cluster source (docs/live-cluster.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from clusters.models import ClusterSource

__all__ = ["SourceView", "source_view", "ago"]


@dataclass(frozen=True)
class SourceView:
    """One line about the source: ``mirroring context prod-eu, last event 3 s ago``."""

    context: str
    state: str
    text: str
    error: str
    failing: bool


def ago(when: datetime | None, now: datetime) -> str:
    """``3 s ago``, ``4 min ago``, ``2 h ago``; ``never`` without a time."""
    if when is None:
        return "never"
    seconds = max(0, int((now - when).total_seconds()))
    if seconds < 120:
        return f"{seconds} s ago"
    if seconds < 7200:
        return f"{seconds // 60} min ago"
    return f"{seconds // 3600} h ago"


def source_view(now: datetime | None = None) -> SourceView | None:
    """The source's line, or None when the stored cluster was never read from a cluster."""
    row = ClusterSource.objects.first()
    if row is None:
        return None
    now = now or timezone.now()
    context = row.context or "(current context)"
    if row.state == ClusterSource.FAILING:
        text = (f"mirroring context {context}: failing since {ago(row.error_since, now)}, "
                f"last event {ago(row.last_event_at, now)}")
    elif row.state == ClusterSource.MIRRORING:
        text = f"mirroring context {context}, last event {ago(row.last_event_at, now)}"
    elif row.state == ClusterSource.SYNCING:
        text = f"reading context {context} (started {ago(row.started_at, now)})"
    elif row.state == ClusterSource.STOPPED:
        text = (f"mirror of context {context} stopped; last event "
                f"{ago(row.last_event_at, now)}")
    else:
        text = f"imported from context {context} {ago(row.imported_at, now)}"
    return SourceView(context, row.state, text, row.error,
                      row.state == ClusterSource.FAILING)
