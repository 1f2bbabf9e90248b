"""The negotiation timeline of control-plane claims (seed 004), from Events.

The scheduler and a control-plane driver negotiate through the pod's PodSchedulingContext
(potential nodes, unsuitable nodes, the selected node); each step is recorded as an Event
about that PodSchedulingContext. The context is named after its pod, so the timeline groups
those Events per pod, oldest first (by timestamp; Events with the same timestamp keep the
order in which they were recorded).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from allocation.engine.objects import PodSchedulingContext
from allocation.engine.state import ClusterState
from allocation.presenters.common import EventRow, event_rows, object_url

__all__ = ["Timeline", "ContextView", "timelines", "timeline_for"]

KIND = "PodSchedulingContext"


@dataclass(slots=True)
class ContextView:
    """The PodSchedulingContext as it stands now."""

    selected_node: str | None
    potential_nodes: list[str]
    unsuitable: dict[str, list[str]]


@dataclass(slots=True)
class Timeline:
    namespace: str
    pod: str
    pod_url: str | None
    steps: list[EventRow] = field(default_factory=list)
    context: ContextView | None = None


def _time_key(item: tuple[int, dict]) -> tuple[str, int]:
    index, event = item
    return (str(event.get("firstTimestamp") or event.get("eventTime")
                or event.get("lastTimestamp") or ""), index)


def timelines(state: ClusterState) -> list[Timeline]:
    """One timeline per pod that has a PodSchedulingContext or Events about one."""
    grouped: dict[tuple[str, str], Timeline] = {}

    def timeline(namespace: str, name: str) -> Timeline:
        key = (namespace, name)
        if key not in grouped:
            grouped[key] = Timeline(namespace, name, object_url("Pod", namespace, name))
        return grouped[key]

    about = [(i, e) for i, e in enumerate(state.events.items)
             if (e.get("involvedObject") or {}).get("kind") == KIND]
    for _index, event in sorted(about, key=_time_key):
        involved = event["involvedObject"]
        line = timeline(involved.get("namespace") or "default", str(involved.get("name", "")))
        line.steps.extend(event_rows([event]))
    for context in state.of_kind(PodSchedulingContext):
        timeline(context.namespace or "default", context.name).context = ContextView(
            context.selected_node, list(context.potential_nodes),
            {claim: nodes for claim, nodes in sorted(context.claim_status.items())})
    return [grouped[k] for k in sorted(grouped)]


def timeline_for(state: ClusterState, namespace: str, pod: str) -> Timeline | None:
    return next((t for t in timelines(state) if (t.namespace, t.pod) == (namespace, pod)),
                None)
