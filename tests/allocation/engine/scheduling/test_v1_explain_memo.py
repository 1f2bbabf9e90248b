"""Pods alike share one explanation (``scheduling/v1_explain.py``): ``RequestMemo`` reuses a
node's requests for claims that differ only in their names, and an identical pod's annotation
is the rendered text with its own claims' names (``scheduling/renaming.py``), unless the text
quotes a claim's name."""

from __future__ import annotations

import json

from allocation.engine.scheduling import renaming, v1_explain
from allocation.engine.scheduling.v1_explain import RequestMemo
from allocation.engine.simulation import simulate
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, load, request, slice_doc
from tests.allocation.engine.scheduling.v1_explain_docs import CLASS_SEL, DRV, cel, gpu
from tests.factories import node, pod


def _memo_case(sel: str) -> tuple:
    """Two pending pods alike but for their claims' names (c1, c2) on node-1, and what
    ``RequestMemo`` needs: the state, the allocator and the two claims."""
    docs = [node("node-1"), class_doc(selectors=cel(CLASS_SEL)),
            slice_doc([gpu("gpu-0", "a")])]
    for name in ("c1", "c2"):
        docs += [claim_doc([request(selectors=cel(sel))], name=name),
                 pod(f"p-{name}", claims={"gpu": name})]
    sim = simulate(load(docs))
    scheduler = next(c for c in sim.controllers if getattr(c, "name", "") == "scheduler")
    claims = [sim.state.get("ResourceClaim", "default", n) for n in ("c1", "c2")]
    return sim.state, scheduler.v1.allocator, claims


def _counting(monkeypatch) -> list:
    calls = []
    real = v1_explain.explain_requests
    monkeypatch.setattr(v1_explain, "explain_requests",
                        lambda *args: calls.append(args) or real(*args))
    return calls


def test_the_memo_reuses_a_nodes_requests_for_claims_alike_with_their_own_names(monkeypatch):
    sel = f'device.attributes["{DRV}"].model == "b"'
    state, allocator, (c1, c2) = _memo_case(sel)
    calls = _counting(monkeypatch)
    version = [0]
    memo = RequestMemo(lambda s, a, name: (name, version[0]), lambda b, n: b == n)

    first, _ = memo.requests(state, allocator, [c1], "node-1")
    second, omitted = memo.requests(state, allocator, [c2], "node-1")

    assert len(calls) == 1 and omitted == 0
    assert [r["claim"] for r in first] == ["default/c1"]
    assert second == [{**first[0], "claim": "default/c2"}]
    version[0] += 1  # the node's state changed: asked again
    memo.requests(state, allocator, [c2], "node-1")
    assert len(calls) == 2


def test_the_memo_does_not_reuse_requests_that_quote_a_claims_name(monkeypatch):
    sel = f'device.attributes["{DRV}"].model == "default/c1"'  # the refusal quotes it
    state, allocator, (c1, c2) = _memo_case(sel)
    calls = _counting(monkeypatch)
    memo = RequestMemo(lambda s, a, name: (name,), lambda b, n: b == n)

    memo.requests(state, allocator, [c1], "node-1")
    second, _ = memo.requests(state, allocator, [c2], "node-1")

    assert len(calls) == 2
    assert second[0]["claim"] == "default/c2"
    assert second[0]["refused"][0]["reason"] == f"request selector `{sel}` is false"


def _bodies(sel: str) -> tuple[list, dict, dict]:
    """The claims c1 and c2 of ``_memo_case`` and each one's annotation body on node-1."""
    state, allocator, claims = _memo_case(sel)
    bodies = [v1_explain.detail(state, allocator, [c], [{"node": "node-1",
                                                         "reason": "cannot allocate all claims"}],
                                1) for c in claims]
    return claims, *bodies


def test_an_identical_pods_annotation_is_the_rendered_text_with_its_claims_renamed():
    (c1, c2), first, second = _bodies(f'device.attributes["{DRV}"].model == "b"')
    rendered = renaming.render("0/1 nodes are available", first, [c1.ref])

    assert rendered.counts == {"default/c1": 1}
    assert rendered.parts is not None  # one claim: renamed by joining the text's parts
    assert renaming.renamed(rendered, [c2.ref]) == renaming.render(
        "0/1 nodes are available", second, [c2.ref]).text == renaming.substitute(
        rendered.text, {'"default/c1"': '"default/c2"'})
    assert renaming.renamed(rendered, [c1.ref]) == rendered.text


def test_an_annotation_quoting_a_claims_name_elsewhere_is_not_renamed():
    sel = f'device.attributes["{DRV}"].model == "default/c1"'
    (c1, c2), first, _ = _bodies(sel)
    # a string equal to the name, outside the claim fields
    first["nodes"][0]["requests"][0]["selectors"].append("default/c1")

    assert renaming.renamed(renaming.render("m", first, [c1.ref]), [c2.ref]) is None


def test_pending_pods_alike_each_name_their_own_claim_and_keep_what_they_quote():
    sel = f'device.attributes["{DRV}"].model == "default/c1"'
    docs = [node("node-1"), class_doc(selectors=cel(CLASS_SEL)),
            slice_doc([gpu("gpu-0", "a")])]
    for name in ("c1", "c2", "c3"):
        docs += [claim_doc([request(selectors=cel(sel))], name=name),
                 pod(f"p-{name}", claims={"gpu": name})]
    output = simulate(load(docs)).output()
    explained = {i["metadata"]["name"]: json.loads(i["metadata"]["annotations"][
        "draplanner.io/explain"]) for i in output["items"] if i["kind"] == "Pod"}

    for name in ("c1", "c2", "c3"):
        [req] = explained[f"p-{name}"]["nodes"][0]["requests"]
        assert req["claim"] == f"default/{name}"
        assert req["selectors"][-1] == f'device.attributes["{DRV}"].model == "default/c1"'
