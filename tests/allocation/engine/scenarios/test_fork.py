"""A scenario evaluated on a fork of the settled baseline equals a simulation of its
documents (allocation/engine/scenarios/fork.py)."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest
import yaml

from allocation.engine.events import DEFAULT_START
from allocation.engine.manifests import InvalidManifests, load_documents
from allocation.engine.scenarios import ChangeError, apply_changes, diff, evaluate, summarize
from allocation.engine.scenarios.fork import fork_state
from allocation.engine.simulation import simulate
from tests.allocation.engine.scenarios.cluster import baseline_documents

ROOT = Path(__file__).resolve().parents[4]
EXAMPLES = ("demo.yaml", "quickstart.yaml", "v1-gpus.yaml")


def _settled(documents: list[dict]):
    """The stored cluster as the worker leaves it: settled documents, no Events, and the
    baseline's settled simulation of them."""
    first = simulate(load_documents(("input", d) for d in documents), now=DEFAULT_START)
    stored = [obj.to_manifest() for obj in first.state.all_objects()]
    base = simulate(load_documents(("baseline", d) for d in stored), now=DEFAULT_START)
    return stored, base


def _example(name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((ROOT / "examples" / name).read_text()) if d]


def _names(documents: list[dict], kind: str) -> list[str]:
    return [f"{(d['metadata'].get('namespace') or 'default')}/{d['metadata']['name']}"
            for d in documents if d.get("kind") == kind]


def _random_changes(rng: random.Random, documents: list[dict]) -> list[dict]:
    pods, nodes = _names(documents, "Pod"), [n.split("/")[1] for n in _names(documents, "Node")]
    groups = [g.split("/")[1] for g in _names(documents, "NodeGroup")]
    pod_docs = [d for d in documents if d.get("kind") == "Pod"]
    changes: list[dict] = []
    for number in range(rng.randint(1, 4)):
        roll = rng.random()
        if roll < 0.35 and pods and nodes:
            changes.append({"op": "pin-pod", "pod": rng.choice(pods), "node": rng.choice(nodes)})
        elif roll < 0.45 and pods:
            changes.append({"op": "unpin-pod", "pod": rng.choice(pods)})
        elif roll < 0.6 and nodes:
            changes.append({"op": "remove-node", "node": rng.choice(nodes)})
        elif roll < 0.7 and groups:
            changes.append({"op": "add-nodes", "group": rng.choice(groups), "count": 1})
        elif roll < 0.8 and pods:
            namespace, name = rng.choice(pods).split("/")
            changes.append({"op": "remove-object", "kind": "Pod", "name": name,
                            "namespace": namespace})
        elif roll < 0.9 and pod_docs:
            twin = copy.deepcopy(rng.choice(pod_docs))
            twin.pop("status", None)
            twin["spec"].pop("nodeName", None)
            twin["metadata"] = {"name": f"twin-{number}",
                                "namespace": twin["metadata"].get("namespace", "default")}
            changes.append({"op": "add-object", "manifest": twin})
        else:
            changes.append({"op": "set-strategy", "strategy": rng.choice(("first-fit",
                                                                          "best-fit"))})
    return changes


def _same(documents, base, changes) -> bool:
    """Evaluate both ways and compare; returns whether the fork was used."""
    try:
        expected = evaluate(documents, changes, now=DEFAULT_START)
    except (ChangeError, InvalidManifests) as exc:
        with pytest.raises(type(exc)) as raised:
            evaluate(documents, changes, now=DEFAULT_START, settled=base)
        assert str(raised.value) == str(exc)
        return False
    forked = fork_state(base, documents, apply_changes(documents, changes),
                        DEFAULT_START) is not None
    actual = evaluate(documents, changes, now=DEFAULT_START, settled=base)
    assert actual.outcome == expected.outcome, changes
    assert actual.diff.to_dict() == expected.diff.to_dict(), changes
    assert actual.documents() == expected.documents(), changes
    return forked


@pytest.mark.parametrize("example", EXAMPLES)
def test_random_changes_on_a_fork_equal_a_simulation_of_the_documents(example):
    documents, base = _settled(_example(example))
    rng = random.Random(example)
    forked = sum(_same(documents, base, _random_changes(rng, documents)) for _ in range(25))
    assert forked >= 15  # the fork really is the path taken


def test_the_baseline_is_not_changed_by_a_fork():
    documents, base = _settled(_example("demo.yaml"))
    before = [obj.to_manifest() for obj in base.state.all_objects()]
    evaluate(documents, [{"op": "remove-node", "node": "t4-2"}], now=DEFAULT_START,
             settled=base)
    assert [obj.to_manifest() for obj in base.state.all_objects()] == before


def test_invalid_added_object_is_reported_as_by_a_simulation():
    documents, base = _settled(baseline_documents())
    bad = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"},
           "spec": {"nodeSelecter": {"zone": "a"}, "containers": [{"name": "c"}]}}
    change = [{"op": "add-object", "manifest": bad}]
    assert fork_state(base, documents, apply_changes(documents, change),
                      DEFAULT_START) is None
    with pytest.raises(InvalidManifests, match="nodeSelecter"):
        evaluate(documents, change, now=DEFAULT_START, settled=base)


def test_a_pod_bound_to_a_missing_node_is_left_to_the_simulation():
    documents, base = _settled(baseline_documents())
    ghost = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ghost"},
             "spec": {"nodeName": "nowhere", "containers": [{"name": "c"}]}}
    change = [{"op": "add-object", "manifest": ghost}]
    assert fork_state(base, documents, apply_changes(documents, change),
                      DEFAULT_START) is None
    with pytest.raises(InvalidManifests, match="nowhere"):
        evaluate(documents, change, now=DEFAULT_START, settled=base)


def test_an_object_removed_and_added_again_goes_last_on_the_fork_too():
    documents, base = _settled(_example("demo.yaml"))
    pod = next(d for d in documents if d.get("kind") == "Pod" and not d["spec"].get("nodeName"))
    again = copy.deepcopy(pod)
    again["metadata"] = {"name": pod["metadata"]["name"],
                         "namespace": pod["metadata"].get("namespace", "default")}
    changes = [{"op": "remove-object", "kind": "Pod", "name": again["metadata"]["name"],
                "namespace": again["metadata"]["namespace"]},
               {"op": "add-object", "manifest": again}]
    applied = apply_changes(documents, changes)
    assert len(applied.documents) == len(documents)  # once, not twice
    assert applied.documents[-1]["metadata"]["name"] == again["metadata"]["name"]
    assert _same(documents, base, changes)


@pytest.mark.parametrize("example", EXAMPLES)
def test_a_forks_outcome_made_from_the_baselines_equals_one_made_afresh(example):
    documents, base = _settled(_example(example))
    rng = random.Random(f"outcome-{example}")
    checked = recounted = 0
    for _ in range(10):
        changes = _random_changes(rng, documents)
        try:
            forked = fork_state(base, documents, apply_changes(documents, changes),
                                DEFAULT_START)
        except ChangeError:
            continue
        if forked is None:
            continue
        forked.settle()
        assert forked.state.changed, changes
        made = summarize(forked.state, summarize(base.state), forked.state.changed)
        assert made == summarize(forked.state), changes
        # the counts per class and driver derived from the baseline state's
        counted = summarize(forked.state, summarize(base.state), forked.state.changed,
                            base.state)
        assert counted == made, changes
        # and the diff of only what changed is the whole comparison
        before = summarize(base.state)
        assert diff(before, made, forked.state.changed) == diff(before, made), changes
        checked += 1
        recounted += (made.classes, made.drivers) != (before.classes, before.drivers)
    assert checked >= 5
    assert recounted  # some changes moved the counts: the derivation was put to the test


@pytest.mark.parametrize("example", EXAMPLES)
def test_counts_derived_from_the_baseline_follow_a_removed_node(example):
    """A node into the bin takes its inventories (and the claims allocated there) out of
    the counts, as a summary made afresh does."""
    documents, base = _settled(_example(example))
    before = summarize(base.state)
    for node in base.state.node_order:
        forked = fork_state(base, documents,
                            apply_changes(documents, [{"op": "remove-node", "node": node}]),
                            DEFAULT_START)
        assert forked is not None
        forked.settle()
        counted = summarize(forked.state, before, forked.state.changed, base.state)
        assert counted == summarize(forked.state), node
