"""allocation.presenters.negotiation: PodSchedulingContext Events per pod, in time order."""

from __future__ import annotations

from allocation.engine.manifests import load_texts
from allocation.engine.state import ClusterState
from allocation.presenters.negotiation import timeline_for, timelines
from tests.factories import API, node, run, to_yaml


def _event(name: str, pod: str, reason: str, time: str, kind: str = "PodSchedulingContext"
           ) -> dict:
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": "default"},
            "involvedObject": {"apiVersion": API, "kind": kind, "name": pod,
                               "namespace": "default"},
            "type": "Normal", "reason": reason, "message": f"{reason} for {pod}",
            "firstTimestamp": time, "lastTimestamp": time,
            "source": {"component": "draplanner-scheduler"}}


def test_events_grouped_per_pod_in_time_order() -> None:
    state = run([
        node("n"),
        _event("e1", "b", "SelectedNode", "2025-01-01T00:00:05Z"),
        _event("e2", "a", "PotentialNodes", "2025-01-01T00:00:01Z"),
        _event("e3", "b", "PotentialNodes", "2025-01-01T00:00:01Z"),
        _event("e4", "b", "UnsuitableNodes", "2025-01-01T00:00:01Z"),
        _event("e5", "a", "Scheduled", "2025-01-01T00:00:01Z", kind="Pod"),
    ]).state

    lines = timelines(state)

    assert [(t.namespace, t.pod) for t in lines] == [("default", "a"), ("default", "b")]
    assert [s.reason for s in lines[0].steps] == ["PotentialNodes"]
    # Same timestamp: recorded order wins.
    assert [s.reason for s in lines[1].steps] == ["PotentialNodes", "UnsuitableNodes",
                                                  "SelectedNode"]
    assert lines[1].pod_url == "/pods/default/b/"
    assert lines[1].steps[0].component == "draplanner-scheduler"


def test_context_object_shows_its_current_negotiation() -> None:
    context = {"apiVersion": API, "kind": "PodSchedulingContext",
               "metadata": {"name": "p", "namespace": "default"},
               "spec": {"selectedNode": "n", "potentialNodes": ["n", "m"]},
               "status": {"resourceClaims": [{"name": "fpga", "unsuitableNodes": ["m"]}]}}
    # Built, not simulated: the control-plane controller would tidy up a context whose pod
    # does not exist.
    state = ClusterState.build(load_texts([("in.yaml", to_yaml([node("n"), context]))]))

    line = timeline_for(state, "default", "p")

    assert line is not None and line.steps == []
    assert line.context.selected_node == "n"
    assert line.context.potential_nodes == ["n", "m"]
    assert line.context.unsuitable == {"fpga": ["m"]}
    assert timeline_for(state, "default", "other") is None
