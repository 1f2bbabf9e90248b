"""The explain annotation of pods with resource.k8s.io/v1 claims (``scheduling/v1_explain.py``):
per node and request, the matching devices and the refused ones grouped by reason.

Pods alike sharing one explanation (``RequestMemo``, the rendered text renamed) are tested in
test_v1_explain_memo.py.
"""

from __future__ import annotations

import json

from allocation.engine.manifests import LoadResult
from allocation.engine.scheduling.reasons import FILTER_ERROR
from allocation.engine.scheduling.v1_explain import (
    MAX_CANDIDATES,
    MAX_GROUPS,
    MAX_MATCHING,
    request_entry,
    verdict_text,
)
from allocation.engine.simulation import simulate
from allocation.engine.v1 import TIMED_OUT
from allocation.engine.v1 import search as search_module
from allocation.engine.v1.explain import REASONS, DeviceVerdict, RequestExplanation
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, load, request, slice_doc
from tests.allocation.engine.scheduling.v1_explain_docs import CLASS_SEL, DRV, cel, gpu
from tests.factories import node, pod


def _dev(name: str) -> str:
    return f"{DRV}/node-1/{name}"


def _pending(docs: list[dict] | LoadResult, name: str = "waiting") -> tuple[dict, dict]:
    """The pod's PodScheduled condition and its explain annotation, parsed (``docs``
    loaded under the default profile unless already loaded)."""
    output = simulate(load(docs) if isinstance(docs, list) else docs).output()
    found = next(i for i in output["items"]
                 if i["kind"] == "Pod" and i["metadata"]["name"] == name)
    assert "nodeName" not in found["spec"]
    condition = next(c for c in found["status"]["conditions"] if c["type"] == "PodScheduled")
    return condition, json.loads(found["metadata"]["annotations"]["draplanner.io/explain"])


def _waiting(claim: dict, *devices: dict, klass: dict | None = None, **slice_spec) -> list:
    """node-1 with ``devices`` in one slice and the pod ``waiting`` with ``claim``."""
    docs = [node("node-1"), klass or class_doc(selectors=cel(CLASS_SEL)),
            slice_doc(list(devices), **slice_spec)]
    return [*docs, claim, pod("waiting", claims={"gpu": claim["metadata"]["name"]})]


def _only_request(annotation: dict) -> dict:
    [entry] = annotation["nodes"]
    [req] = entry["requests"]
    return req


def test_refused_devices_are_grouped_by_reason_with_the_claim_that_holds_one():
    taint = {"key": "maintenance", "value": "bios", "effect": "NoSchedule"}
    sel = f'device.attributes["{DRV}"].model == "a"'
    docs = _waiting(claim_doc([request(selectors=cel(sel))]),
                    gpu("gpu-0", "a"), gpu("gpu-1", "b"),
                    gpu("gpu-2", "a", taints=[taint]))
    held = {"allocation": {"devices": {"results": [
        {"request": "r", "driver": DRV, "pool": "node-1", "device": "gpu-0"}]}}}
    docs.append(claim_doc(name="held", status=held))

    condition, annotation = _pending(docs)

    assert (condition["reason"], condition["message"]) == (
        "Unschedulable", "0/1 nodes are available: 1 cannot allocate all claims.")
    assert annotation == {
        "summary": "0/1 nodes are available: 1 cannot allocate all claims.",
        "nodes": [{"node": "node-1", "reason": "cannot allocate all claims", "requests": [{
            "claim": "default/c", "request": "r", "class": "gpu",
            "selectors": [CLASS_SEL, sel], "matching": [],
            "refused": [
                {"reason": "allocated to claim default/held", "code": "in-use",
                 "candidates": [_dev("gpu-0")]},
                {"reason": f"request selector `{sel}` is false",
                 "code": "request-selector-false", "candidates": [_dev("gpu-1")]},
                {"reason": "untolerated taint maintenance=bios:NoSchedule", "code": "taint",
                 "candidates": [_dev("gpu-2")]}]}],
            "diff": [{"check": "devices", "class": "gpu", "request": "r", "wants": 1,
                      "free": 0}]}],
        "nearest": [{"node": "node-1"}]}


def test_a_false_class_selector_is_named():
    klass = class_doc(selectors=cel(CLASS_SEL) + cel(f'device.attributes["{DRV}"].model == "a"'))
    docs = _waiting(claim_doc(), gpu("gpu-0", "b"), klass=klass)

    [group] = _only_request(_pending(docs)[1])["refused"]

    assert group == {"reason": f'class selector `device.attributes["{DRV}"].model == "a"` '
                               "is false", "code": "class-selector-false",
                     "candidates": [_dev("gpu-0")]}


def test_a_cel_runtime_error_is_a_scheduler_error_naming_claim_request_device_and_key():
    sel = f'device.attributes["{DRV}"].cores > 1'
    docs = _waiting(claim_doc([request("big", selectors=cel(sel))]),
                    gpu("gpu-0", "a"), gpu("gpu-1", "a"))

    condition, annotation = _pending(docs)

    message = (f"{FILTER_ERROR}claim default/c, request big, device {_dev('gpu-0')}: "
               f"request selector #0 `{sel}`: CEL runtime error: no such key: cores")
    assert (condition["reason"], condition["message"]) == ("SchedulerError", message)
    assert annotation["summary"] == message
    assert annotation["error"] == {
        "claim": "default/c", "request": "big", "device": _dev("gpu-0"),
        "selector": "request selector #0", "expression": sel, "error": "no such key: cores"}
    [entry] = annotation["nodes"]
    assert entry["reason"] == ("claim default/c: selector #0: CEL runtime error: "
                               "no such key: cores")
    assert entry["requests"][0]["refused"] == [{
        "reason": f"request selector #0 `{sel}` failed: no such key: cores",
        "code": "cel-error", "candidates": [_dev("gpu-0"), _dev("gpu-1")]}]


def test_a_cel_runtime_error_in_a_class_selector_names_the_class():
    sel = f'device.attributes["{DRV}"].cores > 1'
    docs = _waiting(claim_doc(), gpu("gpu-0", "a"), klass=class_doc(selectors=cel(sel)))

    condition, annotation = _pending(docs)

    assert condition["message"] == (
        f"{FILTER_ERROR}claim default/c, request r, device {_dev('gpu-0')}: class gpu "
        f"selector #0 `{sel}`: CEL runtime error: no such key: cores")
    assert annotation["error"]["selector"] == "class gpu selector #0"


def test_a_selector_written_over_lines_is_one_line_in_the_message_and_whole_in_the_error():
    # drivers' examples write selectors as YAML block text (NVIDIA's gpu-test6)
    sel = f'device.attributes["{DRV}"].cores > 1 &&\n  device.attributes["{DRV}"].cores < 9\n'
    docs = _waiting(claim_doc([request("big", selectors=cel(sel))]), gpu("gpu-0", "a"))

    condition, annotation = _pending(docs)

    assert "\n" not in condition["message"] and condition["message"].endswith(
        f'`device.attributes["{DRV}"].cores > 1 && device.attributes["{DRV}"].cores < 9`: '
        "CEL runtime error: no such key: cores")
    assert annotation["error"]["expression"] == sel


def test_other_fatal_errors_are_scheduler_errors_with_the_allocator_text():
    docs = _waiting(claim_doc([request(allocationMode="All")]), gpu("gpu-0", "a"),
                    pool={"name": "node-1", "resourceSliceCount": 2})

    condition, annotation = _pending(docs)

    text = ("claim default/c, request r: asks for all devices, but resource pool "
            f"{DRV}/node-1 is currently being updated")
    assert (condition["reason"], condition["message"]) == ("SchedulerError",
                                                           FILTER_ERROR + text)
    assert annotation["error"] == {"error": text}
    assert annotation["nodes"][0]["node"] == "node-1"


def test_exhausted_counters_say_how_much_is_left_and_needed():
    counters = slice_doc([], name="counters", pool={"name": "node-1", "resourceSliceCount": 2},
                         sharedCounters=[{"name": "gpu-0-mem",
                                          "counters": {"memory": {"value": "8Gi"}}}])
    half = {"name": "half", "consumesCounters": [
        {"counterSet": "gpu-0-mem", "counters": {"memory": {"value": "16Gi"}}}]}
    docs = _waiting(claim_doc(), half, name="parts",
                    pool={"name": "node-1", "resourceSliceCount": 2})
    docs.insert(2, counters)

    [group] = _only_request(_pending(docs)[1])["refused"]

    assert group == {"reason": "not enough of counter memory in set gpu-0-mem: 8Gi left, "
                               "needs 16Gi", "code": "counters", "candidates": [_dev("half")]}


def test_a_capacity_request_outside_the_policy_names_the_policy():
    shared = {"name": "nic", "allowMultipleAllocations": True, "capacity": {"bandwidth": {
        "value": "10G", "requestPolicy": {"default": "1G", "validRange": {
            "min": "1G", "max": "4G", "step": "1G"}}}}}
    claim = claim_doc([request(capacity={"requests": {"bandwidth": "5G"}})])

    [group] = _only_request(_pending(_waiting(claim, shared))[1])["refused"]

    assert group == {"reason": "capacity bandwidth: 5G violates the request policy "
                               "(validRange min 1G, max 4G, step 1G; default 1G)",
                     "code": "capacity",
                     "candidates": [_dev("nic")]}


def test_a_constraint_names_the_device_it_was_checked_against():
    constraint = [{"matchAttribute": f"{DRV}/model"}]
    claim = claim_doc([request("a", selectors=cel(f'device.attributes["{DRV}"].model == "a"')),
                       request("b", selectors=cel(f'device.attributes["{DRV}"].model == "b"'))],
                      constraints=constraint)

    first, second = _only_request_pair(_pending(_waiting(claim, gpu("gpu-0", "a"),
                                                         gpu("gpu-1", "b")))[1])

    assert first["request"] == "a" and first["matching"] == []
    assert {"reason": f"matchAttribute {DRV}/model: no device of the other requests has the "
                      f"same value (e.g. {_dev('gpu-1')})", "code": "constraint",
            "candidates": [_dev("gpu-0")]} in first["refused"]
    assert second["request"] == "b"


def _only_request_pair(annotation: dict) -> list[dict]:
    [entry] = annotation["nodes"]
    return entry["requests"]


def test_an_incomplete_pool_is_named_and_subrequests_are_explained_one_by_one():
    claim = claim_doc([{"name": "r", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu"}, {"name": "small", "deviceClassName": "gpu"}]}])
    docs = _waiting(claim, gpu("gpu-0", "a"), pool={"name": "node-1", "resourceSliceCount": 2})

    [entry] = _pending(docs)[1]["nodes"]

    assert [r["request"] for r in entry["requests"]] == ["r/big", "r/small"]
    assert entry["requests"][0]["refused"] == [{
        "reason": "its resource pool is incomplete (slices still being published), so it is "
                  "not allocated from", "code": "pool-incomplete", "candidates": [_dev("gpu-0")]}]


def test_an_invalid_pool_is_the_node_reason_and_each_device_says_why():
    pool = {"name": "node-1", "resourceSliceCount": 2}
    docs = _waiting(claim_doc(), gpu("gpu-0", "a"), pool=pool)
    docs.insert(2, slice_doc([gpu("gpu-0", "b")], name="s2", pool=pool))

    [entry] = _pending(docs)[1]["nodes"]

    assert entry["reason"] == "invalid resource pools were encountered"
    assert entry["requests"][0]["refused"] == [{
        "reason": "its resource pool is invalid: duplicate device name gpu-0",
        "code": "pool-invalid", "candidates": [_dev("gpu-0"), _dev("gpu-0")]}]


def test_a_node_the_pod_does_not_select_has_no_requests():
    docs = _waiting(claim_doc(), gpu("gpu-0", "a"))
    docs[-1] = pod("waiting", claims={"gpu": "c"}, node_selector={"zone": "b"})

    [entry] = _pending(docs)[1]["nodes"]

    assert entry == {"node": "node-1",
                     "reason": "node(s) didn't match Pod's node affinity/selector",
                     "diff": [{"check": "nodeSelector", "key": "zone", "wants": "b"}]}


def test_matching_devices_that_are_too_few_are_listed_up_to_the_bound():
    devices = [gpu(f"gpu-{i:02}", "a") for i in range(MAX_MATCHING + 3)]
    claim = claim_doc([request(count=MAX_MATCHING + 4)])

    req = _only_request(_pending(_waiting(claim, *devices))[1])

    assert req["matching"] == [_dev(f"gpu-{i:02}") for i in range(MAX_MATCHING)]
    assert req["matchingMore"] == 3 and req["refused"] == []


def _request(refused: list[DeviceVerdict]) -> RequestExplanation:
    return RequestExplanation(claim="default/c", request="r", device_class="gpu",
                              refused=refused)


def test_candidates_and_groups_are_bounded_with_counts_of_the_rest():
    same = [DeviceVerdict(f"d/p/x{i}", "in-use", claim="default/a")
            for i in range(MAX_CANDIDATES + 2)]
    distinct = [DeviceVerdict(f"d/p/y{i}", "in-use", claim=f"default/b{i}")
                for i in range(MAX_GROUPS + 1)]

    entry = request_entry(_request(same + distinct))

    first = entry["refused"][0]
    assert first["candidates"] == [f"d/p/x{i}" for i in range(MAX_CANDIDATES)]
    assert first["more"] == 2
    assert len(entry["refused"]) == MAX_GROUPS
    assert entry["refused"][-1]["reason"] == f"allocated to claim default/b{MAX_GROUPS - 2}"
    assert entry["refusedMore"] == 2
    assert "matchingMore" not in entry


def test_every_verdict_reason_has_its_own_words():
    verdicts = [DeviceVerdict("d/p/x", reason, expression="e", error="why", claim="ns/c",
                              counter_set="s", counter="c", available="1", needed="2",
                              taint={"key": "k", "effect": "NoExecute"}, selector="sel",
                              constraint="matchAttribute m", against="d/p/y")
                for reason in REASONS if reason != "matched"]

    texts = [verdict_text(v) for v in verdicts]

    assert all(text != v.reason for text, v in zip(texts, verdicts, strict=True))
    assert len(set(texts)) == len(texts)
    assert verdict_text(verdicts[-1]) == ("matchAttribute m: no device of the other requests "
                                          "has the same value (e.g. d/p/y)")
    assert verdict_text(DeviceVerdict("d/p/x", "taint", taint={"key": "k",
                                                              "effect": "NoExecute"})) == (
        "untolerated taint k:NoExecute")


def test_a_pod_bound_where_its_claim_cannot_be_allocated_gets_the_nodes_requests():
    sel = f'device.attributes["{DRV}"].model == "c"'
    docs = _waiting(claim_doc([request(selectors=cel(sel))]), gpu("gpu-0", "a"))
    docs[-1] = pod("waiting", claims={"gpu": "c"}, node_name="node-1")

    output = simulate(load(docs)).output()

    found = next(i for i in output["items"] if i["metadata"]["name"] == "waiting")
    annotation = json.loads(found["metadata"]["annotations"]["draplanner.io/explain"])
    assert annotation["summary"] == ("pod is bound to node-1, where its claims cannot be "
                                     "allocated: cannot allocate all claims")
    [entry] = annotation["nodes"]
    assert entry["requests"][0]["refused"] == [{
        "reason": f"request selector `{sel}` is false", "code": "request-selector-false",
        "candidates": [_dev("gpu-0")]}]


def test_a_missing_class_stays_unschedulable_on_every_node():
    docs = _waiting(claim_doc([request(deviceClassName="nope")]), gpu("gpu-0", "a"))

    condition, annotation = _pending(docs)

    message = "0/1 nodes are available: request r: device class nope does not exist."
    assert (condition["reason"], condition["message"]) == ("Unschedulable", message)
    assert annotation == {"summary": message}


def test_a_distinct_attribute_refusal_says_the_other_request_has_no_choice():
    verdict = DeviceVerdict("d/p/x", "constraint", constraint="distinctAttribute d/model",
                            against="d/p/y")

    assert verdict_text(verdict) == ("distinctAttribute d/model: another request can only use "
                                     "a device with the same value (d/p/y)")


def test_a_node_whose_search_reaches_the_filter_timeout_says_so(monkeypatch):
    # two claims of 3 devices of one model on 4 m0 and 2 of each other model: each fits
    # alone, both do not, and the search needs more steps than the (shortened) timeout's
    monkeypatch.setattr(search_module, "CHECK_AT", 10)
    monkeypatch.setattr(search_module, "TIMEOUT_STEPS", 300)
    models = ["m0"] * 4 + [f"m{1 + i // 2}" for i in range(12)]
    devices = [gpu(f"gpu-{i:02}", m) for i, m in enumerate(models)]
    match = [{"matchAttribute": f"{DRV}/model"}]
    claims = [claim_doc([request(count=3)], name=n, constraints=match) for n in ("a", "b")]
    docs = [node("node-1"), class_doc(selectors=cel(CLASS_SEL)), slice_doc(devices), *claims,
            pod("waiting", claims={"a": "a", "b": "b"})]

    condition, annotation = _pending(load(docs, "1.35"))

    message = "0/1 nodes are available: 1 timed out trying to allocate devices."
    assert (condition["reason"], condition["message"]) == ("Unschedulable", message)
    [entry] = annotation["nodes"]
    assert entry["reason"] == TIMED_OUT
    assert [(r["claim"], len(r["matching"])) for r in entry["requests"]] == [
        ("default/a", 16), ("default/b", 16)]
    assert entry["diff"][-1] == {"check": "budget"}
