"""The scheduling vocabulary (``allocation/engine/scheduling/reasons.py``)."""

from __future__ import annotations

from allocation.engine.scheduling.reasons import (
    R_CPU,
    R_SELECTOR,
    detail_of,
    is_node_reason,
    joined,
    summary,
    taint_reason,
)


def test_summary_sorts_count_and_reason_as_one_string_as_upstream():
    counts = {R_SELECTOR: 1, R_CPU: 2, "Too many pods": 1}
    assert summary(counts, 4) == ("0/4 nodes are available: 1 Too many pods, 1 node(s) "
                                  "didn't match Pod's node affinity/selector, 2 Insufficient cpu.")
    # sort.Strings compares text, not numbers: "10 ..." sorts before "2 ...".
    assert summary({R_CPU: 2, R_SELECTOR: 10}, 12) == (
        "0/12 nodes are available: 10 node(s) didn't match Pod's node affinity/selector, "
        "2 Insufficient cpu.")
    assert summary({}, 0) == "0/0 nodes are available."
    assert summary({R_CPU: 1}, 1, end="") == "0/1 nodes are available: 1 Insufficient cpu"


def test_detail_counts_the_nodes_it_leaves_out():
    assert detail_of([{"node": "a"}], 1) == {"nodes": [{"node": "a"}]}
    assert detail_of([{"node": "a"}], 3) == {"nodes": [{"node": "a"}], "omittedNodes": 2}


def test_a_node_short_of_several_resources_counts_under_each():
    # kube-scheduler's FitError counts every reason of a node's status
    both = joined([R_CPU, "Insufficient memory"])
    assert both == "Insufficient cpu; Insufficient memory"
    assert summary({both: 2, R_CPU: 1, R_SELECTOR: 1}, 4) == (
        "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "2 Insufficient memory, 3 Insufficient cpu.")


def test_node_reasons_are_the_nodes_own_checks():
    assert is_node_reason(taint_reason({"key": "k", "value": "v", "effect": "NoSchedule"}))
    assert is_node_reason("Insufficient example.com/gpu") and is_node_reason(R_SELECTOR)
    assert not is_node_reason("cannot allocate all claims")
    # NodeResourcesFit's reasons joined, whichever comes first
    assert is_node_reason(joined(["Too many pods", R_CPU]))
    assert is_node_reason(joined([R_CPU, "Insufficient memory"]))
