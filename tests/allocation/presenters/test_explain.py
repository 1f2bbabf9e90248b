"""allocation.presenters.explain: the explain annotation in sentences."""

from __future__ import annotations

import json

from allocation.engine.scheduling import reasons
from allocation.engine.v1 import INVALID_POOLS, NOT_AVAILABLE, TIMED_OUT
from allocation.presenters.explain import explain_pod, node_reason_text
from tests.allocation.presenters.docs import cluster_state, v1_state

KEY = "draplanner.io/explain"


def _v1_annotations(state) -> dict[str, str]:
    return state.get("Pod", "default", "v1-waiting").meta.annotations


def test_explanation_of_a_pending_pod_node_by_node() -> None:
    pod = cluster_state().get("Pod", "default", "waiting")

    explanation = explain_pod(pod.meta.annotations)

    assert explanation.summary == "0/2 nodes are available: 2 cannot allocate all claims."
    card_node, gpu_node = explanation.nodes
    assert card_node.node_url == "/nodes/card-node/"
    assert card_node.sentence == "needs 1 device of class cards; no free device matches"
    assert card_node.reason == "cannot allocate all claims"
    (request,) = card_node.requests
    assert request.claim_url == "/claims/default/huge-card/"
    assert request.sentence == "None of the node's 2 candidate(s) is free and matches."
    assert [(r.candidates, r.reason) for r in request.refused] == [
        (["card-0"], "allocated to claim default/card-a"),
        (["card-1"], 'request selector `quantities["memory"] >= "32Gi"` is false')]
    assert gpu_node.requests[0].sentence.startswith("Nothing to choose from: node publishes no")


def test_matching_candidates_that_do_not_fit_together() -> None:
    raw = json.dumps({"summary": "s", "omittedNodes": 3, "nodes": [{
        "node": "n", "reason": "cannot allocate all claims", "requests": [{
            "claim": "team/c", "request": "r", "driver": "d", "selectors": ["true"],
            "matching": ["a", "b"], "refused": []}]}]})

    explanation = explain_pod({KEY: raw})

    assert explanation.omitted_nodes == 3
    request = explanation.nodes[0].requests[0]
    assert request.claim_url == "/claims/team/c/"
    assert request.sentence == ("2 free candidate(s) match (a, b), but not together with the "
                                "pod's other requests.")


def test_no_annotation_and_unreadable_annotation() -> None:
    assert explain_pod({}) is None
    broken = explain_pod({KEY: "{not json"}, fallback="the condition's message")
    assert broken.readable is False
    assert broken.summary == "the condition's message"
    assert broken.raw == "{not json"


def test_reasons_in_plain_words_and_unknown_ones_as_they_are() -> None:
    assert node_reason_text("Insufficient cpu") == "not enough CPU is left on the node"
    assert node_reason_text("something new") == "something new"
    assert node_reason_text("node(s) had untolerated taint {gpu: yes}") == (
        "the node has a taint the pod does not tolerate ({gpu: yes})")
    assert node_reason_text("Too many pods; Insufficient example.com/gpu") == (
        "the node already runs as many pods as it allows; not enough example.com/gpu is left "
        "on the node")
    assert node_reason_text(None) == "no reason recorded"


def test_every_node_reason_of_the_scheduler_has_plain_words() -> None:
    node_reasons = [reasons.R_UNSCHEDULABLE, reasons.R_SELECTOR, reasons.R_CPU, reasons.R_MEMORY,
                    reasons.R_PODS, reasons.R_CLAIMS, reasons.R_ELSEWHERE, reasons.R_CLASS,
                    reasons.R_BUDGET, reasons.FITS_NOW]
    texts = [node_reason_text(reason) for reason in node_reasons]
    assert all(text != reason for text, reason in zip(texts, node_reasons, strict=True))
    assert len(set(texts)) == len(texts)



def test_a_v1_explanation_names_the_class_and_each_refused_device_with_its_reason() -> None:
    sel = 'device.attributes["gpu.example.com"].model == "c"'

    explanation = explain_pod(_v1_annotations(v1_state(sel)))

    assert explanation.error is None
    [request_explanation] = explanation.nodes[0].requests
    assert (request_explanation.claim_url, request_explanation.source) == (
        "/claims/default/v1-claim/", "class gpu")
    assert request_explanation.sentence == (
        "None of the node's 2 candidate(s) is free and matches.")
    assert [(r.code, r.candidates, r.reason) for r in request_explanation.refused] == [
        ("request-selector-false",
         ["gpu.example.com/node-1/gpu-0", "gpu.example.com/node-1/gpu-1"],
         f"request selector `{sel}` is false")]


def test_a_v1_scheduler_error_names_claim_request_device_and_expression() -> None:
    sel = 'device.attributes["gpu.example.com"].cores > 1'

    error = explain_pod(_v1_annotations(v1_state(sel, "big"))).error

    assert (error.claim, error.claim_url, error.request, error.device, error.selector,
            error.expression, error.error) == (
        "default/v1-claim", "/claims/default/v1-claim/", "big", "gpu.example.com/node-1/gpu-0",
        "request selector #0", sel, "no such key: cores")


def test_v1_counts_of_devices_left_out_are_part_of_the_sentences() -> None:
    raw = json.dumps({"summary": "s", "nodes": [{
        "node": "n", "reason": "cannot allocate all claims", "omittedRequests": 2, "requests": [
            {"claim": "team/c", "request": "r", "class": "gpu", "selectors": [],
             "matching": [], "refusedMore": 4, "refused": [
                 {"reason": "allocated to claim team/x", "code": "in-use",
                  "candidates": ["d/p/a"], "more": 5}]},
            {"claim": "team/c", "request": "s", "class": "gpu", "selectors": [],
             "matching": ["d/p/b"], "matchingMore": 2, "refused": []}]}]})

    node = explain_pod({KEY: raw}).nodes[0]

    first, second = node.requests
    assert node.omitted_requests == 2
    assert first.refused[0].count == 6
    assert first.sentence == "None of the node's 10 candidate(s) is free and matches."
    assert second.sentence == ("3 free candidate(s) match (d/p/b and 2 more), but not "
                               "together with the pod's other requests.")


def test_the_v1_node_reasons_have_plain_words() -> None:
    assert node_reason_text(INVALID_POOLS) != INVALID_POOLS
    assert node_reason_text(NOT_AVAILABLE) != NOT_AVAILABLE
    assert "Filter timeout" in node_reason_text(TIMED_OUT)


def test_alike_requests_of_a_node_are_said_once_and_the_node_by_what_it_lacks() -> None:
    entry = {"claim": "default/three", "driver": "d", "selectors": ["s"],
             "matching": ["t4-0", "t4-1"], "refused": []}
    raw = json.dumps({"summary": "s", "nodes": [{
        "node": "t4-2", "reason": "cannot allocate all claims",
        "diff": [{"check": "devices", "class": "t4", "request": "requests[0]", "wants": 3,
                  "free": 2}],
        "requests": [{**entry, "request": f"requests[0].required[{i}]"} for i in range(3)]}],
        "nearest": [{"node": "t4-2"}, {"node": "far", "diff": [{"check": "cordoned"}]}],
        "suggestions": [{"kind": "label", "key": "gpu", "wants": "h100", "values": []}]})

    explanation = explain_pod({KEY: raw})

    [node] = explanation.nodes
    assert node.sentence == "needs 3 devices of class t4 on one node; 2 free ones match"
    [request] = node.requests
    assert request.requests == [f"requests[0].required[{i}]" for i in range(3)]
    assert request.sentence == ("2 free candidate(s) match (t4-0, t4-1), but not enough for "
                                "all 3 alike requests.")
    assert [(n.node, n.node_url, n.diff) for n in explanation.nearest] == [
        ("t4-2", "/nodes/t4-2/", [node.sentence]),
        ("far", "/nodes/far/", ["the node is cordoned (spec.unschedulable)"])]
    assert explanation.suggestions == [
        "No node has label gpu=h100 (no node has a gpu label): change the pod's nodeSelector, "
        "or label a node gpu=h100."]


def test_an_odd_diff_is_shown_as_it_is() -> None:
    raw = json.dumps({"summary": "s", "nodes": [{"node": "n", "reason": "r",
                                                 "diff": [{"check": "new", "x": 1}, 5]}],
                      "nearest": ["n", {"diff": []}], "suggestions": [{"kind": "?"}]})

    explanation = explain_pod({KEY: raw})

    assert explanation.nodes[0].diff == ['{"check": "new", "x": 1}', "5"]
    assert explanation.nearest == []
    assert explanation.suggestions == ['{"kind": "?"}']
