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
