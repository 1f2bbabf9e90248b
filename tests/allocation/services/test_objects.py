"""allocation.services.objects: one object at a time, one identity across a kind's versions."""

import pytest

from allocation import models
from allocation.engine.writer import dump
from allocation.services import objects
from allocation.services.manifests import import_texts
from tests import factories as f
from tests import v1_cluster as v1

pytestmark = pytest.mark.django_db


def test_find_row_looks_in_every_version_of_the_kind(cluster_docs):
    import_texts([("c.yaml", f.to_yaml(cluster_docs))])
    seed_row = models.ResourceClaim.objects.get(name="c1")
    as_v1 = objects.parse_one(dump(v1.claim("c1")), models.ResourceClaimV1)
    assert objects.find_row(as_v1) == seed_row
    with pytest.raises(objects.ObjectExists):
        objects.create_object(dump(v1.claim("c1")), models.ResourceClaimV1)


def test_events_are_created_and_found_in_their_own_model():
    event = {"apiVersion": "v1", "kind": "Event",
             "metadata": {"name": "p1.1", "namespace": "default"},
             "involvedObject": {"kind": "Pod", "name": "p1", "namespace": "default"},
             "type": "Normal", "reason": "Seen", "message": "hello"}
    row = objects.create_object(dump(event), models.Event)
    assert isinstance(row, models.Event) and row.name == "p1.1"
