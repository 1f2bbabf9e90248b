"""The index of the v1 claims made from templates (``made_claims.py``): kept from the
touched keys, it answers what a walk of every claim finds, in a fork too."""

from __future__ import annotations

import random

import pytest

from allocation.engine.constants import POD_CLAIM_NAME_ANNOTATION
from allocation.engine.made_claims import MadeIndex
from allocation.engine.objects import ObjectKey, ResourceClaimV1
from allocation.engine.state import ClusterState
from allocation.engine.touched_since import TouchedLog


def _made_claim(name: str, uid: str | None, entry: str | None) -> ResourceClaimV1:
    meta = {"name": name, "namespace": "default"}
    if uid is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": uid,
                                    "controller": True}]
    if entry is not None:
        meta["annotations"] = {POD_CLAIM_NAME_ANNOTATION: entry}
    return ResourceClaimV1({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                            "metadata": meta, "spec": {"devices": {}}})


def _walk(state: ClusterState) -> dict:
    """What the made claims were found by before the index: a walk of every claim."""
    made = {}
    for claim in state.of_kind(ResourceClaimV1):
        owner = claim.owner_pod
        entry = claim.meta.annotations.get(POD_CLAIM_NAME_ANNOTATION)
        if owner is not None and entry is not None:
            made[(claim.namespace, owner[1], entry)] = claim
    return made


@pytest.mark.parametrize("seed", range(24))
def test_the_made_index_kept_from_the_touched_keys_is_the_walk_of_every_claim(seed):
    """Random claims added, changed (owner, pod claim name), removed and added again, two
    claims sharing one entry at times, the ``touched`` list replaced as the worker's
    catch-up does, the index asked now and then: it answers what the walk finds."""
    rng, state, index = random.Random(seed), ClusterState(), MadeIndex()
    # few pod uids: entries shared most of the time; many: now and then
    uids = [*(f"u{i}" for i in range(3 if seed % 2 else 30)), None]
    entries = ["gpu", "nic", None]
    for step in range(600):
        names = [c.name for c in state.of_kind(ResourceClaimV1)]
        op = rng.random()
        if op < 0.4 or not names:
            state.add(_made_claim(f"c{rng.randrange(40)}", rng.choice(uids), rng.choice(entries)))
        elif op < 0.7:
            claim = state.writable(state.objects[ObjectKey("ResourceClaim", "default",
                                                            rng.choice(names))])
            claim.meta.annotations = {POD_CLAIM_NAME_ANNOTATION: rng.choice(["gpu", "nic"])}
        elif op < 0.9:
            state.remove(state.objects[ObjectKey("ResourceClaim", "default", rng.choice(names))])
        else:
            state.touched = TouchedLog(rng.sample(state.touched, min(2, len(state.touched))),
                                       state.touched)
        if rng.random() < 0.3:
            assert index.claims(state) == _walk(state), f"step {step}"
    assert index.claims(state) == _walk(state)
    fork = state.fork()  # another state: walked again
    fork.remove(next(fork.of_kind(ResourceClaimV1)))
    assert index.claims(fork) == _walk(fork)


@pytest.mark.parametrize("seed", range(4))
def test_a_forks_made_index_is_copied_from_its_parents_and_both_go_their_ways(seed,
                                                                              monkeypatch):
    """``MadeIndex.fork_for``: what the parent touched since its index last looked is caught
    up first; then parent and fork change their own claims (one's removal or new claim
    is not the other's), and neither walks every claim again."""
    rng, state, index = random.Random(seed), ClusterState(), MadeIndex()
    for i in range(30):
        state.add(_made_claim(f"c{i}", f"u{i}", rng.choice(["a", "b"])))  # no entry shared
    index.claims(state)
    state.remove(state.objects[ObjectKey("ResourceClaim", "default", "c0")])  # not looked at
    fork = state.fork()
    walks = []
    monkeypatch.setattr(ClusterState, "of_kind",
                        lambda s, cls, real=ClusterState.of_kind: walks.append(1) or real(s, cls))
    twin = index.fork_for(fork)
    for target in (state, fork, state, fork):
        names = [k.name for k in target.objects if k.kind == "ResourceClaim"]
        target.remove(target.objects[ObjectKey("ResourceClaim", "default", rng.choice(names))])
        name = f"n{rng.randrange(5)}"
        target.add(_made_claim(name, f"v{name}", rng.choice(["a", "b", "c"])))
    made, made_there = index.claims(state), twin.claims(fork)
    assert not walks
    assert made == _walk(state) and made_there == _walk(fork)
