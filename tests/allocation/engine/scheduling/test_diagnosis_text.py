"""``scheduling/diagnosis_text.py``: a diagnosis in words, and odd input shown as it is."""

from __future__ import annotations

import pytest

from allocation.engine.scheduling.diagnosis_text import (
    diff_sentence,
    diff_text,
    diff_texts,
    suggestion_text,
)

DEVICES = {"check": "devices", "class": "t4", "request": "requests[0]", "wants": 3, "free": 2}


@pytest.mark.parametrize(("item", "words"), [
    ({"check": "nodeSelector", "key": "gpu", "wants": "h100", "has": "a100"},
     "nodeSelector wants gpu=h100; the node has gpu=a100"),
    ({"check": "nodeSelector", "key": "zone", "wants": "z"},
     "nodeSelector wants zone=z; the node has no zone label"),
    ({"check": "nodeAffinity", "term": 0, "key": "metadata.name", "operator": "In",
      "values": ["t4-2"], "has": "a100-1"},
     "node affinity term 1 wants metadata.name In (t4-2); the node has metadata.name=a100-1"),
    ({"check": "nodeAffinity", "term": 1, "key": "gpu", "operator": "Exists", "values": []},
     "node affinity term 2 wants gpu Exists; the node has no gpu"),
    ({"check": "nodeAffinity", "term": 0}, "node affinity term 1 is empty, so it matches no node"),
    ({"check": "cpu", "wants": "8", "free": "500m"}, "asks for 8 cpu; the node has 500m free"),
    ({"check": "memory", "wants": "32Gi", "free": "0"},
     "asks for 32Gi of memory; the node has 0 free"),
    ({"check": "pods", "max": 110}, "the node already runs as many pods as it allows (110)"),
    ({"check": "cordoned"}, "the node is cordoned (spec.unschedulable)"),
    ({"check": "taint", "taint": "gpu=yes:NoSchedule"},
     "the node has the taint gpu=yes:NoSchedule, which no toleration of the pod tolerates"),
    (DEVICES, "needs 3 devices of class t4 on one node (request requests[0]); 2 free ones match"),
    ({**DEVICES, "wants": 1, "free": 0},
     "needs 1 device of class t4 (request requests[0]); no free device matches"),
    ({**DEVICES, "wants": "all", "free": 1},
     "needs every device of class t4 (request requests[0]); 1 free one matches"),
    ({"check": "claimUnready", "claims": ["ns/c"]},
     "the device of claim ns/c failed to get ready for binding (a failure condition, or the "
     "binding timeout); it is freed once no other pod holds the claim"),
])
def test_each_check_in_words(item, words):
    assert diff_text(item) == words


def test_a_nodes_only_device_item_leaves_its_request_out():
    assert diff_texts([DEVICES]) == ["needs 3 devices of class t4 on one node; 2 free ones match"]
    assert diff_sentence([DEVICES, {**DEVICES, "request": "other"}]).count("(request") == 2


@pytest.mark.parametrize("odd", [{"check": "new"}, {"check": "cpu"}, "text", None, {"x": 1}])
def test_odd_items_are_shown_as_json(odd):
    assert isinstance(diff_text(odd), str) and isinstance(suggestion_text(odd), str)


def test_suggestions_in_words():
    assert suggestion_text({"kind": "label", "key": "gpu", "wants": "h100",
                            "values": ["a100", "t4"]}) == (
        "No node has label gpu=h100 (nodes have gpu=a100, gpu=t4): change the pod's "
        "nodeSelector, or label a node gpu=h100.")
    assert suggestion_text({"kind": "selector", "class": "gpu", "request": "r",
                            "selector": "false", "nodes": 1}).startswith(
        "No free device on the 1 node diagnosed satisfies `false` (class gpu, request r)")
    assert suggestion_text({"kind": "toleration", "class": "gpu", "request": "r",
                            "taint": "k=v:NoSchedule", "nodes": 2}) == (
        "Every free device of request r (class gpu) on the 2 nodes diagnosed has the taint "
        "k=v:NoSchedule, which the request does not tolerate: add a toleration to the "
        "request, or take the taint off the devices.")
    assert suggestion_text({"kind": "nodeTaint", "taint": "k:NoExecute", "nodes": 3}) == (
        "3 nodes diagnosed have the taint k:NoExecute, which the pod does not tolerate: add "
        "a toleration to the pod (spec.tolerations) if it may run there.")
    assert suggestion_text({"kind": "nodeGroup", "group": "t4-pool", "atMaxSize": True,
                            "maxSize": 3}) == (
        "A new node of node group t4-pool would fit the pod, but the group is at its maxSize "
        "3: raise spec.maxSize to let the autoscaler add it.")
    assert suggestion_text({"kind": "freeClaim", "claim": "default/render-gpu",
                            "node": "t4-1", "pods": ["default/renderer"]}) == (
        "Deallocating claim default/render-gpu (reserved for default/renderer) would let the "
        "pod fit on node t4-1.")
