"""The numeric counter model: capacities, templates, allocation, bad input, properties."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine.manifests import InvalidManifests, load_texts
from allocation.engine.models import Candidate, Request, registry
from allocation.engine.models.counter_template import (
    TemplateError,
    decode_parameters,
    expand_template,
)
from allocation.engine.simulation import simulate

DATA = Path(__file__).parent / "data"
CLUSTER = (DATA / "counter-cluster.yaml").read_text()


def _pods(*specs: tuple[str, str]) -> str:
    out = []
    for name, template in specs:
        out.append(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers: [{{name: main}}]
  resourceClaims: [{{name: f, source: {{resourceClaimTemplateName: {template}}}}}]
""")
    return "".join(out)


def _run(extra: str, strategy: str = "first-fit", cluster: str = CLUSTER):
    return simulate(load_texts([("cluster.yaml", cluster), ("pods.yaml", extra)]),
                    strategy).state


def _picks(state, claim: str) -> tuple[str | None, list]:
    found = state.get("ResourceClaim", "default", claim)
    if found.allocation is None:
        return None, []
    data = found.allocation.handles[0]["structuredData"]
    return data["nodeName"], data["counter"]["instances"]


def _problems(text: str) -> list:
    with pytest.raises(InvalidManifests) as info:
        load_texts([("in.yaml", text)])
    return info.value.problems


# -- allocation ------------------------------------------------------------------------------
def test_first_fit_takes_document_order_best_fit_the_smallest_that_fits() -> None:
    first = _run(_pods(("p1", "two")), "first-fit")
    assert _picks(first, "p1-f") == ("node-a", [{"id": "frob-0", "count": 2}])
    best = _run(_pods(("p1", "two")), "best-fit")
    assert _picks(best, "p1-f") == ("node-a", [{"id": "frob-2", "count": 2}])


def test_allocation_result_snapshots_and_finalizer() -> None:
    state = _run(_pods(("p1", "two")))
    claim = state.get("ResourceClaim", "default", "p1-f")
    data = claim.allocation.handles[0]["structuredData"]
    assert data["vendorClaimParameters"]["spec"] == {"numberOfFrobnicators": 2,
                                                     "env": {"A": "1"}}
    assert data["vendorClassParameters"]["kind"] == "FrobClassParameters"
    assert claim.meta.finalizers == ["numeric.dra.k8s.io/delete-protection"]
    assert claim.allocation.shareable is False
    shared = _run(_pods(("p1", "two")), cluster=CLUSTER.replace(
        "  celTemplate: |", "  shareable: true\n  celTemplate: |"))
    assert shared.get("ResourceClaim", "default", "p1-f").allocation.shareable is True


def test_units_run_out_and_the_explanation_says_so() -> None:
    pods = _pods(*((f"p{i}", "two-small") for i in range(3)))
    state = _run(pods)
    assert [_picks(state, f"p{i}-f")[0] for i in range(3)] == ["node-a", None, None]
    detail = json.loads(state.get("Pod", "default", "p1").meta.annotations[
        "draplanner.io/explain"])
    assert detail["nodes"][0]["node"] == "node-a"
    refused = {r["reason"]: r["candidates"] for r in detail["nodes"][0]["requests"][0]["refused"]}
    assert refused["not enough units left: 0 of 2, needs 2 (2 to claim default/p0-f)"] == [
        "frob-1"]
    assert refused['labels {"model": "big"} do not match the selector'] == ["frob-0", "frob-2"]
    assert detail["nodes"][0]["requests"][0]["selectors"] == [
        "required: 2", 'selector: {"matchLabels": {"model": "small"}}']


def test_several_claims_of_one_pod_share_an_instance_when_units_suffice() -> None:
    pod = """---
apiVersion: v1
kind: Pod
metadata: {name: multi}
spec:
  containers: [{name: main}]
  resourceClaims:
""" + "".join(f"  - {{name: f{i}, source: {{resourceClaimTemplateName: two}}}}\n"
              for i in range(4))
    state = _run(pod)
    picks = [_picks(state, f"multi-f{i}") for i in range(4)]
    # node-a has 6 big units (4 + 2): three claims fit there, the fourth does not.
    assert state.get("Pod", "default", "multi").node_name == "node-b"
    assert picks == [("node-b", [{"id": "frob-0", "count": 2}])] * 4


def _held(count: int, node: str = "node-a") -> str:
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: p0}}
spec: {{nodeName: {node}, containers: [{{name: main}}]}}
status: {{phase: Succeeded}}
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaim
metadata: {{name: old, finalizers: [numeric.dra.k8s.io/delete-protection]}}
spec: {{resourceClassName: frobs}}
status:
  allocation:
    resourceHandles:
    - driverName: frobs.example.com
      structuredData:
        nodeName: {node}
        counter: {{instances: [{{id: frob-1, count: {count}}}]}}
  reservedFor: [{{resource: pods, name: p0}}]
"""


def test_deallocation_restores_the_units() -> None:
    state = _run(_held(2) + _pods(("p1", "two-small")))
    assert state.get("ResourceClaim", "default", "old").allocation is None
    assert _picks(state, "p1-f") == ("node-a", [{"id": "frob-1", "count": 2}])
    inventory = state.inventory_index[("node-a", "frobs.example.com", "counter")]
    assert inventory.left == {"frob-0": 4, "frob-1": 0, "frob-2": 2}


def test_input_allocation_beyond_the_count_is_refused() -> None:
    with pytest.raises(InvalidManifests) as info:
        _run(_held(3))
    (problem,) = info.value.problems
    assert (problem.kind, problem.name) == ("ResourceClaim", "old")
    assert "counter instance frob-1 has 2 of 2 unit(s) left, not enough for 3" in \
        problem.message


# -- templates -------------------------------------------------------------------------------
def test_expand_and_decode_both_spellings() -> None:
    obj = {"spec": {"n": 3, "model": "big"}}
    text = expand_template("Required: {{object.spec.n}}\nSelector: {matchLabels: "
                           "{model: '{{object.spec.model}}'}}\n", obj)
    assert decode_parameters(text).required == 3
    lower = decode_parameters(expand_template("required: {{ object.spec.n + 1 }}", obj))
    assert lower.required == 4 and lower.selector is None
    with pytest.raises(TemplateError, match="must expand to a mapping"):
        decode_parameters("- 1")


@pytest.mark.parametrize(("text", "reason"), [
    # read as a manifest is: within its bounds, to its values, its problems said
    ("a: &a [" + ", ".join(["x" * 200] * 2000) + "]\nb: [" + ", ".join(["*a"] * 2000) + "]",
     "expands to invalid YAML: the document is larger than the 4194304-byte (4 MiB) limit "
     "once its aliases are expanded"),
    ('Required: 1\nSelector: {matchLabels: {"\\uD800": a}}',
     "expands to invalid YAML: invalid YAML at line 2, column 29: found invalid Unicode "
     "character escape code"),
    ("Required: 1\nRequired: 2",
     "expands to invalid YAML: Required: duplicate key 'Required' at line 2"),
    ("Required: 1\n---\nRequired: 2", "expands to more than one YAML document"),
])
def test_an_expanded_template_is_read_as_a_manifest(text: str, reason: str) -> None:
    with pytest.raises(TemplateError) as raised:
        decode_parameters(text)
    assert str(raised.value).startswith(reason)


@pytest.mark.parametrize(("template", "reason"), [
    ("Required: {{object.spec.missing}}", "placeholder {{object.spec.missing}} failed"),
    ("Required: [1", "expands to invalid YAML"),
    ("Required: {{object.spec.name}}", "required: must be an integer, not string 'x'"),
    ("Required: 2.5", "Required: must be an integer, not number 2.5"),
    ("Selector: {}", "exactly one of required, Required must be set"),
    ("Required: 1\nRequierd: 2", "Requierd: unknown field (did you mean Required?)"),
])
def test_template_problems_leave_the_claim_pending(template: str, reason: str) -> None:
    if "spec.name" in template:
        reason = "Required: must be an integer, not string 'x'"
    cluster = CLUSTER.replace("""    Required: {{object.spec.numberOfFrobnicators}}
    Selector: {matchLabels: {model: {{ has(object.spec.model) ? object.spec.model : "big" }}}}
""", "    " + template.replace("\n", "\n    ") + "\n").replace(
        "spec: {numberOfFrobnicators: 2, env: {A: \"1\"}}", "spec: {numberOfFrobnicators: 2, "
        "name: x}")
    state = _run(_pods(("p1", "two")), cluster=cluster)
    assert state.get("ResourceClaim", "default", "p1-f").allocation is None
    message = state.get("Pod", "default", "p1").condition("PodScheduled")["message"]
    assert "class 'frobs' numericParameters[0].celTemplate over ClaimParameters default/two" \
        in message
    assert reason in message


def test_template_error_type() -> None:
    with pytest.raises(TemplateError, match="Key not found|no such key"):
        expand_template("Required: {{object.spec.n}}", {"spec": {}})
    # Validation refuses such a class (tests/allocation/engine/manifests/test_loader.py);
    # expanding one anyway still gives a TemplateError, never an exception of the CEL layer.
    with pytest.raises(TemplateError, match="placeholder {{1 \\+}} is not valid CEL"):
        expand_template("Required: {{ 1 + }}", {})


def test_claim_without_matching_class_entry() -> None:
    cluster = CLUSTER.replace("kind: ClaimParameters\n  celTemplate", "kind: OtherParameters\n"
                              "  celTemplate")
    state = _run(_pods(("p1", "two")), cluster=cluster)
    message = state.get("Pod", "default", "p1").condition("PodScheduled")["message"]
    assert ("has no numericParameters entry for dra.e2e.example.com/v1alpha1 ClaimParameters "
            "(it accepts dra.e2e.example.com/v1alpha1 OtherParameters)") in message


# -- capacity validation --------------------------------------------------------------------
@pytest.mark.parametrize(("count", "message"), [
    ("2.5", "must be an integer, not number 2.5"),
    ("'3'", "must be an integer, not string '3'"),
    ("-1", "must be at least 0, not -1"),
])
def test_capacity_count_must_be_a_non_negative_integer(count: str, message: str) -> None:
    (problem,) = _problems(CLUSTER.replace("count: 8", f"count: {count}"))
    assert (problem.kind, problem.name) == ("NodeResourceCapacity", "node-b-frobs")
    assert problem.path == "instances[0].data.count"
    assert message in problem.message


def test_capacity_typos_and_versions() -> None:
    problems = _problems(CLUSTER.replace("count: 8", "cuont: 8").replace(
        "counter.dra.config.k8s.io/v1alpha1\n  kind: Capacity",
        "counter.dra.config.k8s.io/v1\n  kind: Capacity"))
    text = "\n".join(str(p) for p in problems)
    assert "instances[1].apiVersion: unsupported counter version" in text
    assert "instances[0].data.cuont: unknown field (did you mean count?)" in text


def test_node_group_capacities_are_checked() -> None:
    text = """apiVersion: draplanner.io/v1alpha1
kind: NodeGroup
metadata: {name: frobs}
spec:
  maxSize: 3
  resourceCapacities:
  - driverName: frobs.example.com
    instances:
    - {id: f, apiVersion: counter.dra.config.k8s.io/v1beta1, kind: Capacity,
       data: {count: 1.5}}
"""
    (problem,) = _problems(text)
    assert problem.path == "spec.resourceCapacities[0].instances[0].data.count"


# -- properties ------------------------------------------------------------------------------
@settings(max_examples=80, deadline=None)
@given(counts=st.lists(st.integers(0, 6), min_size=1, max_size=5),
       ops=st.lists(st.tuples(st.integers(1, 4), st.integers(0, 9), st.booleans(),
                              st.integers(0, 20)), max_size=40),
       strategy=st.sampled_from(["first-fit", "best-fit"]))
def test_counters_never_below_zero_and_release_restores(counts, ops, strategy) -> None:
    model = registry.get("counter")
    instances = [{"id": f"i{n}", "apiVersion": "counter.dra.config.k8s.io/v1beta1",
                  "kind": "Capacity", "data": {"count": c}} for n, c in enumerate(counts)]
    inventory = model.build_inventory("n", "d", [instances])
    initial = dict(inventory.left)
    held: list[tuple[Candidate, str]] = []
    for required, owner, take, pick in ops:
        request = Request("d", model, payload=decode_parameters(f"required: {required}"))
        if take:
            found = list(inventory.candidates(request, strategy))
            if found:
                chosen = found[pick % len(found)]
                inventory.take(chosen, f"ns/c{owner}")
                held.append((chosen, f"ns/c{owner}"))
            else:  # nothing yielded: nothing has enough left, and forcing it fails
                with pytest.raises(ValueError):
                    inventory.take(Candidate("i0", 0, None, counts[0] + 1), "ns/x")
        elif held:
            candidate, who = held.pop(pick % len(held))
            inventory.release(candidate, who)
        assert all(left >= 0 for left in inventory.left.values())
        used = {}
        for candidate, _who in held:
            used[candidate.id] = used.get(candidate.id, 0) + candidate.amount
        assert all(inventory.left[i] == initial[i] - used.get(i, 0) for i in initial)
    for candidate, who in held:
        inventory.release(candidate, who)
    assert inventory.left == initial and inventory.held == {}
