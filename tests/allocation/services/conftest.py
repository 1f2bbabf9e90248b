"""Fixtures of the services tests: a small valid cluster."""

import pytest

from tests import factories as f


@pytest.fixture
def cluster_docs():
    """Two nodes with a named device each, a class, a claim and a pod using it."""
    return [f.node("n1"), f.node("n2"), f.named_slice("n1", [f.device("d0")]),
            f.named_slice("n2", [f.device("d1")]), f.resource_class(), f.claim("c1"),
            f.pod("p1", claims={"gpu": "c1"})]
