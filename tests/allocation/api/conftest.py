"""Fixtures of the API tests: a staff client, a user client, a small stored cluster."""

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from rest_framework.test import APIClient

from allocation.services import read_model
from allocation.services.cluster import baseline_state
from allocation.services.manifests import import_texts
from tests import factories as f


@pytest.fixture
def staff_client(db):
    client = APIClient()
    client.force_authenticate(User.objects.create_user("admin", is_staff=True))
    return client


@pytest.fixture
def user_client(db):
    client = APIClient()
    client.force_authenticate(User.objects.create_user("alice"))
    return client


def _sync_read_model() -> None:
    # Node, pod and claim filters answer from the read model, which the worker writes;
    # written here from the stored cluster as it is (unsettled: pods still pending).
    with transaction.atomic():
        read_model.sync(baseline_state())


@pytest.fixture
def sync_read_model(db):
    """Write the read model the way the worker's pass does, without settling."""
    return _sync_read_model


@pytest.fixture
def stored(db):
    docs = [f.node("n1"), f.node("n2"), f.named_slice("n1", [f.device("d0")]),
            f.named_slice("n2", [f.device("d1")], driver="other.example.com"),
            f.resource_class(), f.resource_class("other", driver="other.example.com"),
            f.claim("c1"), f.claim("c2", class_name="other", namespace="team"),
            f.pod("p1", claims={"gpu": "c1"})]
    import_texts([("stored.yaml", f.to_yaml(docs))])
    _sync_read_model()
    return docs
