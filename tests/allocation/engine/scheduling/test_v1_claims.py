"""Which scheduler half a pod is (``scheduling/v1_claims.py``): the v1 one when an entry
names a v1 claim or template."""

from __future__ import annotations

from allocation.engine.manifests import load_texts
from allocation.engine.objects import ResourceClaimTemplateV1, ResourceClaimV1
from allocation.engine.scheduling.v1_claims import v1_claims
from allocation.engine.state import ClusterState
from tests.allocation.engine.manifests.v1_docs import claim_doc, load, request
from tests.factories import claim, claim_template, pod, to_yaml


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


def _names_v1(state: ClusterState, pod) -> bool:
    """The rule, entry by entry with no shortcut: an entry names a v1 template or claim."""
    for entry in pod.claims:
        if entry.template_name and isinstance(
            state.get("ResourceClaimTemplate", pod.namespace, entry.template_name),
            ResourceClaimTemplateV1,
        ):
            return True
        if isinstance(state.get("ResourceClaim", pod.namespace, pod.claim_name(entry)),
                      ResourceClaimV1):
            return True
    return False


def test_the_first_entry_shortcut_answers_as_every_entry_looked_up():
    """A pod whose first entry names a v1 template is the v1 scheduler's at once; every other
    pod (a seed template first, a missing template, a claim by name, a v1 template second)
    is answered as looking up every entry answers, with and without v1 objects."""
    v1_template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                   "metadata": {"name": "v1t", "namespace": "default"},
                   "spec": {"spec": {"devices": {"requests": [request()]}}}}
    pods = [pod("first", templates={"gpu": "v1t"}),
            pod("second", templates={"a": "s", "b": "v1t"}),
            pod("missing", templates={"a": "gone"}),
            pod("named", claims={"gpu": "v"}),
            pod("seed", templates={"a": "s"}),
            pod("seed-claim", claims={"gpu": "c"})]
    seed_docs = [claim("c"), claim_template("s"), *pods]
    for docs in (seed_docs, [*seed_docs, v1_template, claim_doc(name="v")]):
        state = ClusterState.build(load_texts([("in.yaml", to_yaml(docs))]))
        answers = {}
        for doc in pods:
            found = state.get("Pod", "default", doc["metadata"]["name"])
            answers[found.name] = v1_claims(state, found) is not None
            assert answers[found.name] == _names_v1(state, found)
        assert sum(answers.values()) == (3 if len(docs) > len(seed_docs) else 0)
