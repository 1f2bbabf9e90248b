"""The scenario baseline built from the stored rows (scenarios/evaluation.py) equals a
simulation of the stored documents, and so do scenarios evaluated on it."""

from __future__ import annotations

import gc
import random
from pathlib import Path

import pytest
import yaml
from django.test import override_settings

from allocation.engine.manifests import InvalidManifests, load_documents
from allocation.engine.scenarios import ChangeError, evaluate, summarize
from allocation.engine.simulation import simulate
from allocation.engine.v1 import make_profile
from allocation.services.manifests import export_documents, import_texts
from allocation.services.reconcile import reconcile
from scenarios import evaluation
from tests.allocation.engine.scenarios.test_fork import _random_changes
from tests.factories import to_yaml

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ("demo.yaml", "quickstart.yaml", "v1-gpus.yaml")


def _example(name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((ROOT / "examples" / name).read_text()) if d]


def _store(documents: list[dict], settle: bool = True) -> None:
    evaluation.clear_caches()
    import_texts([("cluster.yaml", to_yaml(documents))], replace=True)
    if settle:
        reconcile()  # as the worker would


def _simulated(now):
    """The baseline the slow way: the stored documents loaded and simulated again."""
    documents = export_documents(events=False)
    return documents, simulate(load_documents(("baseline", d) for d in documents), now=now)


def _same_baseline():
    base = evaluation.baseline()
    documents, expected = _simulated(base.now)
    assert base.documents == documents
    assert summarize(base.simulation.state) == base.outcome
    assert base.outcome == summarize(expected.state)
    assert ([o.to_manifest() for o in base.simulation.state.all_objects()]
            == [o.to_manifest() for o in expected.state.all_objects()])
    return base, documents, expected


def _same_evaluations(base, documents, rng: random.Random, rounds: int = 12,
                      settled=None) -> None:
    """Evaluations on ``base`` equal those of the documents simulated again (or, given
    ``settled``, those on a fork of that simulation of the stored documents)."""
    for _ in range(rounds):
        changes = _random_changes(rng, documents)
        try:
            expected = evaluate(documents, changes, baseline=base.outcome, now=base.now,
                                settled=settled)
        except (ChangeError, InvalidManifests) as exc:
            with pytest.raises(type(exc)) as raised:
                evaluation.evaluate_changes(changes)
            assert str(raised.value) == str(exc)
            continue
        actual, _base = evaluation.evaluate_changes(changes)
        assert actual.outcome == expected.outcome, changes
        assert actual.diff.to_dict() == expected.diff.to_dict(), changes
        assert actual.documents() == expected.documents(), changes


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_baseline_and_its_evaluations_equal_a_simulation_of_the_documents(example):
    _store(_example(example))
    base, documents, _expected = _same_baseline()
    _same_evaluations(base, documents, random.Random(example))


def test_a_baseline_the_worker_has_not_settled_yet_is_settled_the_same():
    _store(_example("demo.yaml"), settle=False)
    base, documents, expected = _same_baseline()
    # changes apply to the documents as stored, so only a fork of the same settled
    # simulation of them can be compared (a simulation of the changed documents would
    # settle the rest again, in another order)
    _same_evaluations(base, documents, random.Random(3), rounds=6, settled=expected)


def test_stored_positions_with_gaps_are_followed():
    docs = _example("demo.yaml")
    _store(docs)
    # deleting objects leaves gaps in the stored positions
    kept = [d for i, d in enumerate(docs) if d.get("kind") != "Pod" or i % 3]
    import_texts([("cluster.yaml", to_yaml(kept))], replace=True)
    reconcile()
    evaluation.clear_caches()
    base, documents, _expected = _same_baseline()
    assert base.positions != list(range(1, len(base.positions) + 1))
    _same_evaluations(base, documents, random.Random(5), rounds=8)


def test_a_large_baseline_is_spared_from_collections_and_freed_when_replaced(monkeypatch):
    import gc
    import weakref

    monkeypatch.setattr(evaluation, "_FREEZE_FROM", 0)  # as if large
    docs = _example("demo.yaml")
    _store(docs)
    try:
        old = weakref.ref(evaluation.baseline().simulation)
        evaluation.evaluate_changes([{"op": "remove-node", "node": "t4-2"}])
        assert gc.get_freeze_count() > 0
        import_texts([("cluster.yaml", to_yaml(docs[:-1]))], replace=True)
        reconcile()
        assert evaluation.baseline().revision > 0
        assert old() is None  # the replaced baseline and its evaluations are gone
    finally:
        gc.unfreeze()


def test_a_large_baseline_keeps_its_last_evaluation(monkeypatch):
    _store(_example("demo.yaml"))
    pins = [[{"op": "pin-pod", "pod": pod, "node": "t4-2"}]
            for pod in evaluation.baseline().outcome.pods][:3]
    assert len(pins) == 3

    def kept() -> list:
        return [evaluation.evaluate_changes(changes)[0] for changes in pins]

    first = kept()
    assert all(a is b for a, b in zip(kept(), first, strict=True))  # all three kept
    monkeypatch.setattr(evaluation, "_FREEZE_FROM", 0)  # as if large
    evaluation.clear_caches()
    try:
        made = kept()
        assert evaluation.evaluate_changes(pins[2])[0] is made[2]
        assert evaluation.evaluate_changes(pins[1])[0] is not made[1]  # made again
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("example", ["demo.yaml", "v1-gpus.yaml"])
def test_an_evaluation_dropped_by_a_large_baseline_is_freed_before_the_next_is_made(
        monkeypatch, example):
    import weakref

    monkeypatch.setattr(evaluation, "_FREEZE_FROM", 0)  # as if large: one evaluation kept
    _store(_example(example))
    pods = list(evaluation.baseline().outcome.pods)[:2]
    node = evaluation.baseline().outcome.nodes[-1]
    # freed by reference counting alone (the collector is off below): a reference cycle in
    # an evaluation would keep it, and every dropped one, until a collection
    dropped = weakref.ref(evaluation.evaluate_changes(
        [{"op": "pin-pod", "pod": pods[0], "node": node}])[0].state)
    seen = []
    made = evaluation.evaluate

    def evaluate(*args, **kwargs):
        seen.append(dropped() is None)
        return made(*args, **kwargs)

    monkeypatch.setattr(evaluation, "evaluate", evaluate)
    gc.disable()  # no collection falls due on its own
    try:
        evaluation.evaluate_changes([{"op": "pin-pod", "pod": pods[1], "node": node}])
        assert seen == [True]
    finally:
        gc.enable()
        gc.unfreeze()


def test_a_large_baseline_makes_young_collections_rarer_until_it_is_gone(monkeypatch):
    _store(_example("demo.yaml"))  # clears the caches: the collector as Python sets it
    default = gc.get_threshold()
    evaluation.baseline()
    assert gc.get_threshold() == default  # a small baseline leaves the collector as it is
    monkeypatch.setattr(evaluation, "_FREEZE_FROM", 0)  # as if large
    evaluation.clear_caches()
    try:
        evaluation.baseline()
        assert gc.get_threshold() == (evaluation._YOUNG_WHILE_LARGE, *default[1:])
        evaluation.clear_caches()
        assert gc.get_threshold() == default
    finally:
        gc.set_threshold(*default)
        gc.unfreeze()


def test_requests_asking_at_once_wait_for_one_build(monkeypatch):
    import threading
    import time

    built, release = [], threading.Event()

    def build():
        built.append(1)
        release.wait(5)
        return evaluation.Baseline(7, [], [], None, None, None, None)

    evaluation.clear_caches()
    monkeypatch.setattr(evaluation.cluster, "revision", lambda: 7)
    monkeypatch.setattr(evaluation, "build", build)
    found = []
    threads = [threading.Thread(target=lambda: found.append(evaluation.baseline()))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    time.sleep(0.2)  # both are in baseline(): one building, the other waiting for it
    release.set()
    for thread in threads:
        thread.join(5)
    evaluation.clear_caches()
    assert len(built) == 1
    assert len(found) == 2 and found[0] is found[1]


@override_settings(DRA_KUBERNETES_VERSION="1.35")
def test_scenarios_are_evaluated_under_the_consoles_profile():
    # 1.35 has device taints off: a request's tolerations are dropped, and said so
    _store(_example("v1-gpus.yaml"))
    base, documents, _expected = _same_baseline()
    assert base.simulation.state.profile.release == "1.35"
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "tolerant", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                 "deviceClassName": "gpu.example.com",
                 "tolerations": [{"operator": "Exists"}]}}]}}}
    changes = [{"op": "add-object", "manifest": claim}]
    actual, _base = evaluation.evaluate_changes(changes)
    assert actual.state.profile.release == "1.35"
    old = evaluate(documents, changes, now=base.now, profile=make_profile("1.35"))
    new = evaluate(documents, changes, now=base.now, profile=make_profile("1.36"))
    assert actual.documents() == old.documents()
    # said, not silently ignored, on the fork and on a simulation of the documents alike
    assert actual.base is not None and old.base is None
    assert actual.warnings == old.warnings == [
        "(ResourceClaim default/tolerant): spec.devices.requests[0].exactly."
        "tolerations: field dropped: feature gate DRADeviceTaints is off in Kubernetes 1.35"]
    assert new.warnings == []
    # the profile decides here: the tolerations are kept under 1.36
    assert old.documents() != new.documents()
