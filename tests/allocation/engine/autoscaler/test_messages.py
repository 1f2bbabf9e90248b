"""``autoscaler/messages.py``: what a pod asks for, in words, for v1 claims too."""

from __future__ import annotations

from allocation.engine.autoscaler.messages import demand
from allocation.engine.simulation import simulate
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, load, request
from tests.factories import node, pod


def test_v1_requests_in_words():
    first = {"name": "any", "firstAvailable": [
        {"name": "big", "deviceClassName": "big"}, {"name": "small", "deviceClassName": "gpu"}]}
    claims = [claim_doc([request("two", count=2), request("every", allocationMode="All"),
                         first], name="c")]
    state = simulate(load([node("node-1"), class_doc(), class_doc("big"), *claims,
                           pod("p", claims={"gpu": "c"}, cpu="500m")])).state
    assert demand(state, state.get("Pod", "default", "p")) == (
        "2 devices of class gpu and all devices of class gpu and 1 device of class big or "
        "gpu and 0.5 cpu")
