"""What a pod needs (``allocation/engine/scheduling/needs.py``)."""

from __future__ import annotations

from allocation.engine.events import VirtualClock
from allocation.engine.manifests import load_texts
from allocation.engine.scheduling.needs import Plans, no_negotiation, pod_needs
from allocation.engine.state import ClusterState
from tests import factories as f


def test_wants_are_made_once_per_pending_list_and_again_when_it_grows():
    docs = [
        f.node("n1"),
        f.named_slice("n1", [f.device("gpu-0"), f.device("gpu-1")]),
        f.resource_class("gpu"),
        f.claim_parameters("two", "true", "true"),
        f.claim_parameters("one", "true"),
        f.claim("c1", params="two"),
        f.claim("c2", params="one"),
        f.pod("p", claims={"a": "c1", "b": "c2"}),
    ]
    state = ClusterState.build(load_texts([("t.yaml", f.to_yaml(docs))]), VirtualClock())
    needs = pod_needs(state, state.get("Pod", "default", "p"), Plans(), no_negotiation)

    def fresh() -> list[tuple[str, object]]:
        return [(claim.ref, request) for claim, plan in needs.pending for request in plan.requests]

    wants = needs.wants
    assert [(w.owner, w.request) for w in wants] == fresh()
    assert [w.owner for w in wants] == ["default/c1", "default/c1", "default/c2"]
    assert needs.wants is wants  # the search and the commit share one list
    needs.pending.append(needs.pending[0])
    assert (
        [(w.owner, w.request) for w in needs.wants]
        == fresh()
        != [(w.owner, w.request) for w in wants]
    )
