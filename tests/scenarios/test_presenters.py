"""scenarios/presenters.page: chips are made and sorted only for the pods drawn, and the page
is what sorting every pod and making every chip gave."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from allocation.engine.events import DEFAULT_START
from allocation.engine.manifests import InvalidManifests
from allocation.engine.scenarios import ChangeError, evaluate
from scenarios.presenters import page
from tests.allocation.engine.scenarios.test_fork import _example, _random_changes, _settled
from tests.factories import node, pod


def _documents() -> list[dict]:
    # namespaces and names out of order in the documents; two pods fit a node, ten pods
    names = [("b", "z"), ("a-b", "x"), ("a", "y"), ("a", "b"), ("b", "a"), ("a", "c"),
             ("c", "q"), ("a", "a"), ("b", "m"), ("a-b", "a")]
    pods = [pod(name, cpu="3", namespace=namespace) for namespace, name in names]
    return [*(node(f"n{i}") for i in range(4)), *pods]


def _everything_sorted(result) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """The reference: every pod sorted by namespace and name, then split by node."""
    by_node: dict[str, list[str]] = {}
    queue: list[str] = []
    pods = sorted(result.state.pods(), key=lambda p: (p.namespace or "", p.name))
    for p in pods:
        ref = f"{p.namespace}/{p.name}"
        (by_node.setdefault(p.node_name, []) if p.node_name else queue).append(ref)
    return by_node, queue, sorted(f"{p.namespace}/{p.name}" for p in pods)


def test_the_drawn_pods_are_in_the_order_sorting_every_pod_gave() -> None:
    result = evaluate(_documents(), [{"op": "pin-pod", "pod": "b/a", "node": "n3"}])
    by_node, queue, refs = _everything_sorted(result)

    view = page(result, limit=2)

    assert len(view.nodes) == 2 and view.hidden == 2
    assert all(len(n.pods) == 2 for n in view.nodes)
    assert {n.name: [c.ref for c in n.pods] for n in view.nodes} == {
        n.name: by_node.get(n.name, []) for n in view.nodes}
    assert [c.ref for c in view.queue] == queue and len(queue) == 2
    assert view.pod_refs == refs


@pytest.mark.parametrize("example", ["demo.yaml", "quickstart.yaml", "v1-gpus.yaml"])
def test_a_forks_page_made_from_the_baselines_pods_equals_one_made_afresh(example) -> None:
    documents, base = _settled(_example(example))
    rng = random.Random(f"page-{example}")
    forked = with_pods = 0
    for _ in range(12):
        changes = _random_changes(rng, documents)
        try:
            result = evaluate(documents, changes, now=DEFAULT_START, settled=base)
        except (ChangeError, InvalidManifests):
            continue
        afresh = replace(result, base=None)  # no baseline to start from: every pod looked at
        assert page(result) == page(afresh), changes
        forked += result.base is not None
        with_pods += any(k.kind == "Pod" for k in result.state.changed)
    assert forked >= 5 and with_pods >= 3  # the fork's path is the one taken


def test_a_drop_that_keeps_every_pod_offers_the_baselines_own_list_of_them() -> None:
    """A pin moves a pod: the Move form's pod list is the baseline's very list, whose
    options were drawn already (scenario_tags.options); a removed pod makes a new one."""
    documents, base = _settled(_documents())
    baseline = page(evaluate(documents, [], now=DEFAULT_START, settled=base))
    pinned = evaluate(documents, [{"op": "pin-pod", "pod": "b/a", "node": "n3"}],
                      now=DEFAULT_START, settled=base)
    removed = evaluate(documents, [{"op": "remove-object", "kind": "Pod", "name": "a",
                                    "namespace": "b"}], now=DEFAULT_START, settled=base)
    assert pinned.base is not None and removed.base is not None
    assert any(k.kind == "Pod" for k in pinned.state.changed)
    assert page(pinned).pod_refs is baseline.pod_refs
    assert page(removed).pod_refs == page(replace(removed, base=None)).pod_refs
    assert "b/a" not in page(removed).pod_refs


def test_a_forks_palette_of_groups_templates_and_requests_equals_a_walk_of_every_object() -> None:
    """The palette (node groups, templates, selectors, requests) of a fork is its
    baseline's with the objects it changed looked at again: equal to a walk of every
    object, with such objects removed, added and replaced."""
    documents, base = _settled(_example("demo.yaml"))
    request = {"apiVersion": "autoscaling.x-k8s.io/v1", "kind": "ProvisioningRequest",
               "metadata": {"name": "what-if", "namespace": "default"},
               "spec": {"provisioningClassName": "check-capacity.autoscaling.x-k8s.io",
                        "podSets": [{"podTemplateRef": {"name": "batch-inference"},
                                     "count": 1}]}}
    template = next(d for d in documents if d.get("kind") == "PodTemplate")
    renamed = {**template, "metadata": {**template["metadata"], "name": "another"}}
    changes = [{"op": "remove-object", "kind": "NodeGroup", "name": "t4-pool"},
               {"op": "add-object", "manifest": request},
               {"op": "add-object", "manifest": renamed}]
    result = evaluate(documents, changes, now=DEFAULT_START, settled=base)
    assert result.base is not None
    view, afresh = page(result), page(replace(result, base=None))
    assert view == afresh
    assert [g.name for g in view.groups] == ["a100-pool"]
    assert view.templates[-1] == "default/another" and len(view.templates) >= 2
    assert view.requests[-1]["ref"] == "default/what-if"
