"""Fixtures of the services tests: a small valid cluster."""

import pytest

from tests import factories as f


@pytest.fixture
def cluster_docs():
    """Two nodes with a named device each, a class, a claim and a pod using it."""
    return [f.node("n1"), f.node("n2"), f.named_slice("n1", [f.device("d0")]),
            f.named_slice("n2", [f.device("d1")]), f.resource_class(), f.claim("c1"),
            f.pod("p1", claims={"gpu": "c1"})]


@pytest.fixture
def three_pods():
    """A node with three named devices, a class, and three pods with a claim each."""
    docs = [f.node("n1"), f.named_slice("n1", [f.device(f"d{i}") for i in range(3)]),
            f.resource_class()]
    for i in (1, 2, 3):
        docs += [f.claim(f"c{i}"), f.pod(f"p{i}", claims={"gpu": f"c{i}"})]
    return docs
