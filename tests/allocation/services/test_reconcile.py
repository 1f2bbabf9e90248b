"""allocation.services.reconcile: a worker pass on the stored cluster."""

import pytest
import yaml

from allocation import models
from allocation.services import reconcile as passes
from allocation.services.cluster import revision
from allocation.services.manifests import export_text, import_texts
from tests import factories as f

pytestmark = pytest.mark.django_db


def _claim_status() -> dict:
    return models.ResourceClaim.objects.get(name="c1").manifest.get("status", {})


def test_a_pass_reconciles_to_a_fixed_point_and_saves_once(cluster_docs,
                                                           django_capture_on_commit_callbacks):
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        result = passes.reconcile()
    assert result.outcome == passes.SAVED and result.revision == 2
    # Node: the engine writes documents back normalised (empty labels dropped).
    assert result.kinds == ["Event", "Node", "Pod", "ResourceClaim"]
    assert len(callbacks) == 1
    assert _claim_status()["reservedFor"][0]["name"] == "p1"
    pod = models.Pod.objects.get(name="p1")
    assert (pod.node_name, pod.status) == ("n1", "Scheduled")
    assert models.ResourceClaim.objects.get().status == "Reserved"
    assert models.Cluster.objects.get().reconciled_revision == 2
    assert passes.reconcile().outcome == passes.UNCHANGED and revision() == 2


def test_the_outcome_matches_simulate(cluster_docs):
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    passes.reconcile()
    simulated = f.run(cluster_docs).output()["items"]
    stored = yaml.safe_load(export_text())["items"]
    objects = [i for i in stored if i["kind"] != "Event"]
    expected = [i for i in simulated if i["kind"] != "Event"]
    for item in objects + expected:  # the baseline runs on real time
        for condition in item.get("status", {}).get("conditions", ()):
            condition.pop("lastTransitionTime", None)
    assert objects == expected


def test_events_are_numbered_on_across_passes(cluster_docs):
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    passes.reconcile()
    import_texts([("b.yaml", f.to_yaml([f.claim("c2"), f.pod("p2", claims={"g": "c2"})]))])
    passes.reconcile()
    names = list(models.Event.objects.order_by("position").values_list("name", flat=True))
    assert len(names) == len(set(names)) >= 4
    assert names[-1].endswith(f".{len(names):08d}")


def test_a_pass_killed_while_saving_leaves_the_state_as_it_was(cluster_docs, monkeypatch):
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    before = export_text()
    real_save = passes.save_plan

    def crash(cluster, plan):
        real_save(cluster, plan)  # everything written, then the worker dies
        raise SystemExit("killed")

    monkeypatch.setattr(passes, "save_plan", crash)
    with pytest.raises(SystemExit):
        passes.reconcile()
    assert export_text() == before and revision() == 1
    monkeypatch.setattr(passes, "save_plan", real_save)
    assert passes.reconcile().outcome == passes.SAVED
    assert _claim_status()["allocation"]


def test_a_pass_on_stale_input_writes_nothing(cluster_docs, monkeypatch):
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    real_settle = passes.Simulation.settle

    def settle_while_someone_writes(self):
        import_texts([("b.yaml", f.to_yaml([f.node("n9")]))])
        return real_settle(self)

    monkeypatch.setattr(passes.Simulation, "settle", settle_while_someone_writes)
    result = passes.reconcile()
    assert (result.outcome, result.revision) == (passes.STALE, 2)
    assert "allocation" not in _claim_status()


def test_a_pass_without_the_lease_writes_nothing(cluster_docs):
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    assert passes.reconcile(holds_lease=lambda: False).outcome == passes.LOST_LEASE
    assert revision() == 1 and "allocation" not in _claim_status()
