"""A small stored cluster for scenario tests (imported through the services)."""

from __future__ import annotations

from allocation.services.manifests import import_texts
from allocation.services.reconcile import reconcile
from scenarios.evaluation import clear_caches
from tests.factories import (
    claim_parameters,
    claim_template,
    device,
    named_slice,
    node,
    pod,
    resource_class,
    to_yaml,
)

BIG = 'attributes["memory"] >= "32Gi"'


def documents(pods: int = 3) -> list[dict]:
    docs = [node("worker-1"), node("worker-2"),
            named_slice("worker-1", [device("gpu-0", memory=("quantity", "32Gi"))]),
            named_slice("worker-2", [device("gpu-0", memory=("quantity", "32Gi"))]),
            resource_class("gpu"), claim_parameters("big", BIG),
            claim_template("big-gpu", params="big")]
    return docs + [pod(f"p{i}", templates={"gpu": "big-gpu"}) for i in range(pods)]


def store(docs: list[dict] | None = None) -> None:
    """Make ``docs`` (default: two one-card nodes, three pods) the stored, settled baseline."""
    clear_caches()
    import_texts([("cluster.yaml", to_yaml(documents() if docs is None else docs))],
                 replace=True)
    reconcile()  # as the worker would: the stored baseline is a settled cluster
