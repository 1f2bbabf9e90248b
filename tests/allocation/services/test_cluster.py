"""allocation.services.cluster: revision and the cached baseline state."""

import pytest

from allocation.engine.state import ClusterState
from allocation.services.cluster import baseline_state, clear_cache, revision
from allocation.services.manifests import import_texts
from tests import factories as f

pytestmark = pytest.mark.django_db


def test_empty_database_has_revision_zero_and_an_empty_baseline():
    clear_cache()
    assert revision() == 0
    state = baseline_state()
    assert isinstance(state, ClusterState) and state.all_objects() == []


def test_baseline_is_cached_per_revision(cluster_docs):
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    first = baseline_state()
    assert baseline_state() is first
    assert sorted(first.nodes) == ["n1", "n2"]
    assert first.get("ResourceClaim", "default", "c1") is not None
    import_texts([("b.yaml", f.to_yaml([f.node("n3")]))])
    second = baseline_state()
    assert second is not first and sorted(second.nodes) == ["n1", "n2", "n3"]
    assert revision() == 2


def test_a_reported_timer_only_moves_forward_and_is_no_revision():
    from datetime import timedelta

    from django.utils import timezone

    from allocation.models import Cluster
    from allocation.services.cluster import timers_due

    now = timezone.now()
    assert timers_due(now)
    assert not timers_due(now - timedelta(minutes=1))
    assert not timers_due(now)
    assert Cluster.objects.get().timers_due_at == now
    assert revision() == 0  # bookkeeping, not a change of the cluster
