"""scenarios.baseline: a baseline caught up from the change log is the baseline a build
from every stored row makes, and so are the scenarios evaluated on it."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pytest
from django.utils import timezone

from allocation.engine.manifests import InvalidManifests
from allocation.engine.scenarios import ChangeError, evaluate
from allocation.services import changes, cluster, incremental
from allocation.services.manifests import import_texts
from allocation.services.reconcile import reconcile
from scenarios import baseline as baselines
from scenarios import evaluation
from tests import factories as f
from tests.allocation.engine.scenarios.test_fork import _random_changes
from tests.random_writes import BASE, RandomWrites, seed_node

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _fixed_now(monkeypatch):
    """One clock for every baseline and pass, so a catch-up and a build settle alike."""
    monkeypatch.setattr(timezone, "now", lambda: NOW)
    evaluation.clear_caches()
    yield
    evaluation.clear_caches()


def _manifests(base: baselines.Baseline) -> list[dict]:
    return [o.to_manifest() for o in base.simulation.state.all_objects()]


def _same_as_built(base: baselines.Baseline) -> None:
    built = baselines.build()
    assert base.revision == built.revision
    assert base.positions == built.positions
    assert base.documents == built.documents
    assert base.outcome == built.outcome
    assert _manifests(base) == _manifests(built)
    # quiet only when the settle changed nothing as written: a catch-up also counts a new
    # row the worker will write again in its own form (a build takes every row as it is)
    assert built.quiet or not base.quiet
    state, other = base.simulation.state, built.simulation.state
    assert state.node_order == other.node_order
    assert {k: i.usage() for k, i in state.inventory_index.items()} == {
        k: i.usage() for k, i in other.inventory_index.items()}


def _scenarios_as_on_a_build(rng: random.Random, base: baselines.Baseline) -> None:
    """Two random scenarios evaluated on the process's current baseline (``base``) give what
    they give on a fork of a baseline built from the rows now."""
    documents = base.documents
    for _ in range(2):
        scenario = _random_changes(rng, documents)
        try:
            expected = evaluate(documents, scenario, baseline=base.outcome, now=base.now,
                                settled=baselines.build().simulation,
                                base_source="stored", positions=base.positions)
        except (ChangeError, InvalidManifests):
            continue
        actual, _base = evaluation.evaluate_changes(scenario)
        assert actual.outcome == expected.outcome, scenario
        assert actual.documents() == expected.documents(), scenario


@pytest.mark.parametrize("seed", range(8))
def test_caught_up_baselines_are_the_baselines_a_build_makes(seed):
    import_texts([("base.yaml", f.to_yaml(BASE))])
    reconcile(now=NOW)
    rng = random.Random(seed)
    writes, caught = RandomWrites(rng), 0
    assert evaluation.baseline().caught_up is None  # the first one is built
    for _step in range(10):
        writes.step()
        if rng.random() < 0.7:
            reconcile(now=NOW)  # the worker's pass; or not yet: a baseline not quiet
        base = evaluation.baseline()
        caught += base.caught_up is not None
        _same_as_built(base)
        _scenarios_as_on_a_build(rng, base)
    assert caught >= 5  # most were caught up, not built


@pytest.fixture
def worker_slot():
    """The kept state of an in-process worker, shared with the process's scenarios."""
    slot = incremental.KeptSlot()
    incremental.share(slot)
    yield slot
    incremental.unshare(slot)


def _worker_pass(slot: incremental.KeptSlot):
    return slot.run_pass(lambda kept: reconcile(now=NOW, kept=kept))


@pytest.mark.parametrize("seed", range(6))
def test_baselines_forked_from_the_workers_state_are_the_baselines_a_build_makes(
        seed, worker_slot):
    """A process whose worker kept the state it settled forks it for its first baseline:
    the same documents, positions, objects and outcome as a build from the rows, and the
    same scenarios on it; the worker's later passes leave the fork as it was."""
    import_texts([("base.yaml", f.to_yaml(BASE))])
    kept_at = _worker_pass(worker_slot).revision
    rng = random.Random(seed)
    writes, forked, earlier = RandomWrites(rng), 0, []
    for _step in range(8):
        writes.step()
        if rng.random() < 0.7:
            result = _worker_pass(worker_slot)
            kept_at = result.revision if result.kept is not None else None
        evaluation.clear_caches()  # each time a process's first baseline
        base = evaluation.baseline()
        assert base.forked == (kept_at == cluster.revision())  # else built
        forked += base.forked
        _same_as_built(base)
        documents = base.documents
        if base.forked:
            assert base.quiet and base.caught_up is None
            scenario = _random_changes(rng, documents)
            earlier.append((base, scenario, _on(base, scenario), json.dumps(documents),
                            _manifests(base)))
        _scenarios_as_on_a_build(rng, base)
    assert forked >= 3
    # the worker changed its own copies only: each fork, its memos and books as they were
    for base, scenario, evaluated, documents, manifests in earlier:
        assert (json.dumps(base.documents), _manifests(base)) == (documents, manifests)
        assert _on(base, scenario) == evaluated, scenario


def _on(base: baselines.Baseline, scenario: list[dict]):
    """The outcome and documents of ``scenario`` evaluated on ``base``'s settled simulation,
    or the refusal's type."""
    try:
        result = evaluate(base.documents, scenario, baseline=base.outcome, now=base.now,
                          settled=base.simulation, base_source="stored",
                          positions=base.positions)
    except (ChangeError, InvalidManifests) as error:
        return type(error)
    return result.outcome, result.documents()


def test_a_baseline_is_built_while_the_worker_passes_or_is_behind(worker_slot):
    import_texts([("a.yaml", f.to_yaml([f.resource_class(), *seed_node("n0")]))])
    during = []
    worker_slot.run_pass(lambda kept: (during.append(baselines.forked(cluster.revision())),
                                       reconcile(now=NOW, kept=kept))[1])
    assert during == [None]  # a pass runs: the caller builds rather than wait
    assert baselines.forked(cluster.revision()).forked
    import_texts([("b.yaml", f.to_yaml([f.node("late")]))])  # the worker has not seen it
    assert baselines.forked(cluster.revision()) is None
    assert not evaluation.baseline().forked


def test_only_a_quiet_baseline_is_caught_up_from():
    import_texts([("a.yaml", f.to_yaml([f.resource_class(), *seed_node("n0")]))])
    reconcile(now=NOW)
    quiet = evaluation.baseline()
    assert quiet.quiet
    import_texts([("b.yaml", f.to_yaml([f.claim("c1"), f.pod("p1", claims={"g": "c1"})]))])
    placed = evaluation.baseline()  # its settle places p1, which the rows do not say yet
    assert placed.caught_up == 2 and not placed.quiet
    assert evaluation._quiet is quiet
    reconcile(now=NOW)  # the worker places p1 as the baseline did
    after = evaluation.baseline()
    assert after.quiet and after.caught_up is not None
    assert after.outcome == placed.outcome
    _same_as_built(after)


def test_a_quiet_baseline_behind_the_pruned_log_is_built_again(monkeypatch):
    import_texts([("a.yaml", f.to_yaml([f.resource_class(), *seed_node("n0")]))])
    reconcile(now=NOW)
    assert evaluation.baseline().quiet
    monkeypatch.setattr(changes, "KEEP", 1)
    monkeypatch.setattr(changes, "_PRUNE_EVERY", 1)
    for i in range(3):
        import_texts([(f"{i}.yaml", f.to_yaml([f.node(f"x{i}")]))])
    base = evaluation.baseline()
    assert base.caught_up is None
    _same_as_built(base)


def test_rows_read_while_a_write_commits_are_read_again(monkeypatch):
    """The rows are read without a transaction's lock, between two reads of the revision:
    a write committed in between makes them be read again, so a baseline's rows are always
    those of its revision."""
    import_texts([("a.yaml", f.to_yaml([f.resource_class(), *seed_node("n0")]))])
    reconcile(now=NOW)
    real, writes = baselines.state_rows, []

    def racing():
        rows = real()
        if not writes:  # a write commits after the first read of the rows
            writes.append(import_texts([("late.yaml", f.to_yaml([f.node("late")]))]))
        return rows

    monkeypatch.setattr(baselines, "state_rows", racing)
    base = baselines.build()
    assert base.revision == cluster.revision()
    assert "late" in [d["metadata"]["name"] for d in base.documents]


def test_a_built_baseline_shares_its_documents_equal_parts(monkeypatch):
    """A baseline is kept while its revision is current: its build reads the rows with
    their equal parts shared (``store.build_state(shared_parts=True)``), and what one
    scenario's evaluation changes of its objects is seen neither by the baseline nor by
    the other object whose document shares the part."""
    from allocation.services import store

    import_texts([("a.yaml", f.to_yaml([f.node("n0", {"zone": "a"}),
                                        f.node("n1", {"zone": "a"})]))])
    monkeypatch.setattr(store, "_parsed", type(store._parsed)())  # parsed by this build
    base = baselines.build()
    n0, n1 = (d for d in base.documents if d["kind"] == "Node")
    assert n0["status"] is n1["status"] and n0["metadata"] is not n1["metadata"]
    assert n0["metadata"]["labels"] is n1["metadata"]["labels"]
    written = json.dumps(base.documents), _manifests(base)
    fork = base.simulation.fork()
    node = fork.state.writable(fork.state.get("Node", None, "n0"))
    node.meta.labels["zone"] = "b"
    assert fork.state.get("Node", None, "n0").to_manifest()["metadata"]["labels"] == \
        {"zone": "b"}
    assert fork.state.get("Node", None, "n1").meta.labels == {"zone": "a"}
    assert (json.dumps(base.documents), _manifests(base)) == written
