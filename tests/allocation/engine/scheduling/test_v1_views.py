"""The v1 scheduler's views of claims and a pod's attempt (``scheduling/v1_views.py``)."""

from __future__ import annotations

from allocation.engine.objects import ResourceClaimV1
from allocation.engine.scheduling import v1_views
from tests.allocation.engine.manifests.v1_docs import claim_doc

_ALLOCATED = {"allocation": {"devices": {"results": [
    {"request": "req", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]}}}


def test_an_attempt_lists_its_unallocated_claims_and_makes_their_views_once_when_asked(
        monkeypatch):
    made = []
    real = v1_views.claim_doc
    monkeypatch.setattr(v1_views, "claim_doc", lambda c: made.append(c.name) or real(c))
    free = ResourceClaimV1(claim_doc(name="free"))
    taken = ResourceClaimV1(claim_doc(name="taken", status=_ALLOCATED))

    attempt = v1_views.PodAttempt.of([taken, free])

    assert attempt.pending == [free] and not attempt.all_pending
    assert made == []  # no view before one is asked for (a pod answered without a search)
    assert attempt.docs == [real(free)] and attempt.docs is attempt.docs
    assert made == ["free"]
    every = v1_views.PodAttempt.of([free])
    assert every.all_pending and every.pending == [free]


def test_the_signature_is_none_for_an_attempt_with_an_allocated_claim():
    free = ResourceClaimV1(claim_doc(name="free"))
    taken = ResourceClaimV1(claim_doc(name="taken", status=_ALLOCATED))

    class Pod:  # what pod_signature and signature read of a pod
        namespace, node_selector, node_affinity = "default", {}, None
        cpu_milli, memory, nominated_node_name, tolerations = 0, 0, None, []

    assert v1_views.signature(Pod(), v1_views.PodAttempt.of([taken, free])) is None
    assert v1_views.signature(Pod(), v1_views.PodAttempt.of([free])) is not None
