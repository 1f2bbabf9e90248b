"""A small baseline for what-if tests: two nodes with one big card each, three pods."""

from __future__ import annotations

from tests.factories import (
    claim_parameters,
    claim_template,
    device,
    named_slice,
    node,
    pod,
    resource_class,
    run,
)

BIG = 'attributes["memory"] >= "32Gi"'


def baseline_documents(pods: int = 3, extra: list | None = None) -> list[dict]:
    """Stored-style documents (after simulation, with status) of the baseline."""
    docs = [node("worker-1"), node("worker-2"),
            named_slice("worker-1", [device("gpu-0", memory=("quantity", "32Gi"))]),
            named_slice("worker-2", [device("gpu-0", memory=("quantity", "32Gi"))]),
            resource_class("gpu"), claim_parameters("big", BIG),
            claim_template("big-gpu", params="big"), *(extra or [])]
    docs += [pod(f"p{i}", templates={"gpu": "big-gpu"}) for i in range(pods)]
    sim = run(docs)
    return [obj.to_manifest() for obj in sim.state.all_objects()]

