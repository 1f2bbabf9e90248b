"""Which scheduler half a pod is (``scheduling/v1_claims.py``): the v1 one when an entry
names a v1 claim or template."""

from __future__ import annotations

from allocation.engine.manifests import load_texts
from allocation.engine.scheduling.v1_claims import v1_claims
from allocation.engine.state import ClusterState
from tests.allocation.engine.manifests.v1_docs import claim_doc, load
from tests.factories import claim, pod, to_yaml


def test_a_pod_of_a_cluster_without_v1_claims_is_the_seeds_until_one_is_added():
    """The shortcut (no v1 claim or template in the state: no lookup per entry) answers as
    the lookups do, and a v1 claim added later makes the pod the v1 scheduler's."""
    state = ClusterState.build(
        load_texts(
            [
                (
                    "in.yaml",
                    to_yaml(
                        [claim("c"), pod("p", claims={"gpu": "c"}), pod("q", claims={"gpu": "v"})]
                    ),
                )
            ]
        )
    )
    seed_pod, other = state.get("Pod", "default", "p"), state.get("Pod", "default", "q")
    assert v1_claims(state, seed_pod) is None and v1_claims(state, other) is None
    [v1_claim] = load([claim_doc(name="v")]).objects
    state.add(v1_claim)
    assert v1_claims(state, seed_pod) is None
    assert v1_claims(state, other).claims == [v1_claim]
