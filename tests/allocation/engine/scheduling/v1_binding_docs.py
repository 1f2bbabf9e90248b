"""What the tests of binding conditions on a held claim share (test_v1_postfilter.py,
test_checks.py): node-1 with one GPU that has binding conditions, claim ``c`` allocated on it
and reserved for the running pod ``holder``, and the pending pod ``p`` using ``c`` too."""

from __future__ import annotations

from allocation.engine.objects import stable_uid
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, device, slice_doc
from tests.factories import node, pod

_BINDING = {"bindingConditions": ["Attached"], "bindingFailureConditions": ["AttachFailed"]}


def held_cluster(stamped: str, conditions: list[dict] | None = None) -> list[dict]:
    """The documents: ``c`` allocated at ``stamped``, with ``conditions`` in its device
    status when given."""
    result = {"request": "r", "driver": "gpu.example.com", "pool": "node-1",
              "device": "gpu-0", **_BINDING}
    status: dict = {
        "allocation": {"devices": {"results": [result]}, "allocationTimestamp": stamped},
        "reservedFor": [{"resource": "pods", "name": "holder",
                         "uid": stable_uid("Pod", "default", "holder")}]}
    if conditions is not None:
        status["devices"] = [{"driver": "gpu.example.com", "pool": "node-1",
                              "device": "gpu-0", "conditions": conditions}]
    return [node("node-1"), class_doc(), slice_doc([device("gpu-0", **_BINDING)]),
            claim_doc(name="c", status=status),
            pod("holder", claims={"gpu": "c"}, node_name="node-1"),
            pod("p", claims={"gpu": "c"})]
