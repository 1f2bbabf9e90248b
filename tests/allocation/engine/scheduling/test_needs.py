"""What a pod needs (``allocation/engine/scheduling/needs.py``)."""

from __future__ import annotations

from allocation.engine.events import VirtualClock
from allocation.engine.manifests import load_texts
from allocation.engine.scheduling.needs import Plans, no_negotiation, pod_needs
from allocation.engine.state import ClusterState
from tests.factories import (
    claim,
    claim_parameters,
    device,
    named_slice,
    node,
    pod,
    resource_class,
    to_yaml,
)


def test_wants_are_made_once_per_pending_list_and_again_when_it_grows():
    docs = [node("n1"), named_slice("n1", [device("gpu-0"), device("gpu-1")]),
            resource_class("gpu"), claim_parameters("two", "true", "true"),
            claim_parameters("one", "true"), claim("c1", params="two"),
            claim("c2", params="one"), pod("p", claims={"a": "c1", "b": "c2"})]
    state = ClusterState.build(load_texts([("t.yaml", to_yaml(docs))]), VirtualClock())
    needs = pod_needs(state, state.get("Pod", "default", "p"), Plans(), no_negotiation)

    def fresh() -> list[tuple[str, object]]:
        return [(claim.ref, request) for claim, plan in needs.pending
                for request in plan.requests]

    wants = needs.wants
    assert [(w.owner, w.request) for w in wants] == fresh()
    assert [w.owner for w in wants] == ["default/c1", "default/c1", "default/c2"]
    assert needs.wants is wants  # the search and the commit share one list
    needs.pending.append(needs.pending[0])
    assert [(w.owner, w.request) for w in needs.wants] == fresh() != \
        [(w.owner, w.request) for w in wants]
