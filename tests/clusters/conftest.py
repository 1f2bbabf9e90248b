"""Fixtures of the clusters app's tests: a fixture API server holding a small cluster."""

from __future__ import annotations

import pytest

from tests.clusters.objects import small_cluster
from tests.kube_server import FakeApiServer, write_kubeconfig


@pytest.fixture
def fake():
    """The fixture API server (tests/kube_server.py) with :func:`small_cluster`."""
    with FakeApiServer(bookmark_seconds=0.1) as server:
        server.put_all(small_cluster())
        yield server


@pytest.fixture
def kubeconfig(fake, tmp_path):
    """A kubeconfig for :func:`fake`, context ``prod-eu``."""
    return write_kubeconfig(tmp_path / "kubeconfig", fake.url)


@pytest.fixture
def connection(kubeconfig):
    from clusters.kube.client import connect

    return connect(str(kubeconfig))
