"""A v1 pod's failure kept per signature (``allocation/engine/scheduling/v1_failures.py``):
twins answered from it while nothing changed, each with its own claims named, exactly as a
scan and a rendering of their own give; kept for one settle's rounds, never across settles."""

from __future__ import annotations

from unittest.mock import patch

from allocation.engine.scheduling.v1 import V1Scheduling
from allocation.engine.scheduling.v1_failures import Failures
from allocation.engine.simulation import simulate
from allocation.engine.writer import dump
from tests.allocation.engine.manifests.v1_docs import (
    claim_doc,
    class_doc,
    device,
    load,
    request,
    slice_doc,
)
from tests.allocation.engine.scheduling.v1_outputs import items, pod_condition, twins
from tests.factories import node, pod


def test_a_failure_is_not_reused_once_a_node_changed():
    # pod-0 and pod-1 fill both nodes' devices; pod-2 fails; "plain" takes 2 of node-0's 3
    # CPUs; pod-2's twin pod-3 must see node-0's new answer
    docs = twins([(2, 1), (2, 1), (2, 1)], nodes=2)
    docs += [pod("plain", cpu="2"), claim_doc([request(count=2, selectors=[])], name="claim-3"),
             pod("pod-3", claims={"gpu": "claim-3"}, cpu="1")]
    output = simulate(load(docs)).output()
    first = {}  # each pod's first FailedScheduling message: the first pass's answer
    for e in output["items"]:
        if e["kind"] == "Event" and e["reason"] == "FailedScheduling":
            first.setdefault(e["involvedObject"]["name"], e["message"])
    assert first["pod-2"] == "0/2 nodes are available: 2 cannot allocate all claims."
    assert items(output, "Pod")["plain"]["spec"]["nodeName"] == "node-0"
    assert first["pod-3"] == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 cannot allocate all claims.")


def _node_walks(per_signature: int) -> int:
    """How often the v1 scheduler looks at a node's state for pending pods of two
    signatures (cpu 20 and 30 on nodes with 8) that alternate, ``per_signature`` each."""
    docs = [*(node(f"node-{i}") for i in range(3)), class_doc(), slice_doc([device("gpu-0")])]
    for i in range(per_signature):
        for cpu in ("20", "30"):
            docs += [claim_doc(name=f"c-{cpu}-{i}"),
                     pod(f"p-{cpu}-{i}", claims={"gpu": f"c-{cpu}-{i}"}, cpu=cpu)]
    calls = []
    real = V1Scheduling._node_state
    with patch.object(V1Scheduling, "_node_state",
                      lambda *args: calls.append(1) or real(*args)):
        output = simulate(load(docs)).output()
    assert not any(i["spec"].get("nodeName") for i in output["items"] if i["kind"] == "Pod")
    return len(calls)


def test_alternating_pending_pods_alike_reuse_the_failure_of_their_signature():
    # their own FailedScheduling events change no node's answer: one walk per signature
    assert _node_walks(3) == _node_walks(1) > 0


def test_a_pending_pod_answered_from_its_twins_failure_is_marked_as_a_failure_is():
    # a node fits one pod of each shape; the twins after are answered by fail_again,
    # which must mark them exactly as fail does (their own claims named)
    docs = twins([(2, 1), (2, 1), (2, 1), (3, 1), (3, 2), (3, 2), (2, 1)], nodes=1)
    calls = []
    real = Failures.fail_again
    with patch.object(Failures, "fail_again",
                      lambda self, *args: calls.append(1) or real(self, *args)):
        again = dump(simulate(load(docs)).output(), "yaml")
    assert calls
    with patch.object(Failures, "fail_again",
                      lambda self, state, allocator, pod, claims, key, failure: self.fail(
                          state, allocator, pod, claims, key, *failure)):
        assert dump(simulate(load(docs)).output(), "yaml") == again


def _renders(docs: list[dict]) -> tuple[int, str]:
    """How often the v1 scheduler renders a failure in full in a simulation of ``docs``,
    and the output."""
    calls = []
    real = Failures.fail
    with patch.object(Failures, "fail",
                      lambda self, *args: calls.append(1) or real(self, *args)):
        output = dump(simulate(load(docs)).output(), "yaml")
    return len(calls), output


def test_a_failure_is_kept_for_the_rounds_of_one_settle():
    # pod-2 and pod-3 fit nowhere: marked in the first round, visited again in the next,
    # they are answered from the first failure, not by a second scan and rendering
    docs = twins([(2, 1), (2, 1), (2, 1), (2, 1)], nodes=2)
    renders, output = _renders(docs)
    assert renders == 1
    with patch.object(V1Scheduling, "begin", lambda self: (
            V1Scheduling.begin_settle(self), self.source.begin(),
            setattr(self, "_placed", {}), setattr(self, "_has_classes", None))):
        assert _renders(docs) == (2, output)  # forgotten per round: the same output


def test_a_failure_is_kept_for_its_settle_only():
    # between settles anyone may have changed the state (a kept pass's writes, a caller's
    # edits): the pending pod visited again in the next settle is scanned afresh
    docs = [node("node-0"), class_doc(), slice_doc([device("gpu-0")]), claim_doc(name="c"),
            claim_doc(name="d"), pod("p", claims={"gpu": "c"}), pod("q", claims={"gpu": "d"})]
    calls = []
    real = Failures.fail
    with patch.object(Failures, "fail",
                      lambda self, *args: calls.append(args[2].meta.name) or real(self, *args)):
        sim = simulate(load(docs))
        [pending] = calls  # one pod fits; the other's second round is answered from its first
        sim.state.writable(sim.state.get("Pod", "default", pending))  # visited again
        sim.settle()
    assert calls == [pending, pending]
    assert pod_condition(sim.output(), pending) == (
        "Unschedulable", "0/1 nodes are available: 1 cannot allocate all claims.")
