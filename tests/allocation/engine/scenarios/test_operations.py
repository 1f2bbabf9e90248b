from __future__ import annotations

import random

import pytest

from allocation.engine.objects import ObjectKey
from allocation.engine.scenarios import OPS, ChangeError, apply_changes, read
from allocation.engine.scenarios.documents import (
    DocumentIndex,
    Documents,
    deallocate_v1,
    is_v1_claim,
    unbind,
)
from allocation.engine.scenarios.operations import OPERATIONS
from allocation.engine.v1.results import allocated_node_name
from tests.allocation.engine.scenarios.test_fork import EXAMPLES as CLUSTERS
from tests.allocation.engine.scenarios.test_fork import (
    _example,
    _random_changes,
    _settled,
)

EXAMPLES = {
    "pin-pod": ({"pod": "default/p0", "node": "worker-2"}, "Pin default/p0 to worker-2"),
    "unpin-pod": ({"pod": "default/p0"}, "Return default/p0 to the queue"),
    "add-nodes": ({"group": "gpus", "count": 2}, "Add 2 node(s) of group gpus"),
    "remove-node": ({"node": "worker-1"}, "Remove node worker-1 (its pods are replanned)"),
    "add-object": ({"manifest": {"kind": "Pod", "metadata": {"name": "x"}}}, "Add Pod x"),
    "remove-object": ({"kind": "Pod", "name": "x", "namespace": "team"}, "Remove Pod x"),
    "edit-selector": ({"kind": "DeviceClass", "object": "gpu",
                       "path": "spec.selectors[0].cel.expression", "expression": "true"},
                      "Set gpu spec.selectors[0].cel.expression to true"),
    "set-strategy": ({"strategy": "best-fit"}, "Search with best-fit"),
}


def test_every_operation_is_read_typed_and_described():
    assert set(EXAMPLES) == set(OPS)
    for op, (fields, words) in EXAMPLES.items():
        operation = read({"op": op, **fields}, 3)
        assert type(operation) is OPERATIONS[op]
        assert operation.index == 3
        assert operation.describe() == words


def test_optional_fields_are_kept():
    operation = read({"op": "remove-object", "kind": "Pod", "name": "x", "namespace": "team"})
    assert operation.namespace == "team"


@pytest.mark.parametrize(("change", "message"), [
    ("pin", "changes[2].op: a change must be an object with an op"),
    ({"op": "teleport"}, "changes[2].op: unknown operation 'teleport'; one of " + ", ".join(OPS)),
    ({"op": "pin-pod", "pod": "default/p0"}, "changes[2].node: required field is missing"),
    ({"op": "add-nodes", "group": "g", "count": True},
     "changes[2].count: must be an integer, not a boolean"),
    ({"op": "add-nodes", "group": "g", "count": 101},
     "changes[2].count: must be an integer from 1 to 100"),
    ({"op": "set-strategy", "strategy": "worst-fit"},
     "changes[2].strategy: must be one of first-fit, best-fit"),
    ({"op": "add-object", "manifest": "kind: Pod"},
     "changes[2].manifest: must be an object, not a string"),
    # a change comes as JSON: each field is checked for its type before it is used
    ({"op": "remove-node", "node": []}, "changes[2].node: must be a string, not a list"),
    ({"op": "pin-pod", "pod": "default/x", "node": {}},
     "changes[2].node: must be a string, not an object"),
    ({"op": "remove-object", "kind": "Pod", "name": "x", "namespace": 5},
     "changes[2].namespace: must be a string, not a number"),
    ({"op": "add-nodes", "group": "g", "count": 1.5},
     "changes[2].count: must be an integer, not a number"),
    ({"op": "edit-selector", "kind": "DeviceClass", "object": "gpu",
      "path": "spec.selectors[0].cel.expression", "expression": ["true"]},
     "changes[2].expression: must be a string, not a list"),
    ({"op": "add-object", "manifest": {"kind": "Pod"}},
     "changes[2].manifest: needs kind and metadata.name"),
    ({"op": "add-object", "manifest": {"kind": "Node", "metadata": {"name": {"a": 1}}}},
     "changes[2].manifest: metadata.name: must be a string, not an object"),
    ({"op": "add-object", "manifest": {"kind": "Pod", "metadata": {"name": "p",
                                                                   "namespace": ["a"]}}},
     "changes[2].manifest: metadata.namespace: must be a string, not a list"),
    ({"op": "edit-selector", "kind": "DeviceClass", "object": "gpu", "path": "spec.name",
      "expression": "true"}, "changes[2].path: must name a selector field"),
])
def test_a_malformed_change_names_its_index_and_field(change, message):
    with pytest.raises(ChangeError) as raised:
        read(change, 2)
    assert str(raised.value) == message


def _removed_by_scan(documents: list[dict], changes: list[dict], node: str) -> list[dict]:
    """The documents after ``changes`` and then ``node`` removed by a scan of every
    document, as removing a node did before it looked at the baseline's documents by node
    (``DocumentIndex.grouped``)."""
    docs = Documents(apply_changes(documents, changes).documents)
    docs.remove(ObjectKey("Node", None, node))
    for kind in ("NodeResourceSlice", "NodeResourceCapacity", "ResourceSlice"):
        for key in docs.of_kind(kind):
            doc = docs.by_key[key]
            holder = doc if kind == "NodeResourceCapacity" else doc.get("spec", doc)
            if holder.get("nodeName") == node:
                docs.remove(key)
    for key in docs.of_kind("Pod"):
        if (docs.by_key[key].get("spec") or {}).get("nodeName") == node:
            unbind(docs, key)
    for key in docs.of_kind("ResourceClaim"):
        doc = docs.by_key[key]
        allocation = (doc.get("status") or {}).get("allocation") or {}
        on = allocated_node_name(allocation) == node if is_v1_claim(doc) else any(
            (h.get("structuredData") or {}).get("nodeName") == node
            for h in allocation.get("resourceHandles") or ())
        if not on:
            continue
        claim = docs.writable(key)
        gone = ("reservedFor",) if is_v1_claim(claim) else ("allocation", "driverName",
                                                            "reservedFor")
        claim["status"] = {k: v for k, v in claim["status"].items() if k not in gone}
        if is_v1_claim(claim):
            deallocate_v1(claim)
        else:  # the finalizer list is written even when there was none
            meta = claim.get("metadata") or {}
            meta["finalizers"] = [f for f in meta.get("finalizers") or ()
                                  if not f.endswith(".dra.k8s.io/delete-protection")]
    return docs.documents()


@pytest.mark.parametrize("example", CLUSTERS)
def test_removing_a_node_edits_what_a_scan_of_every_document_edits(example):
    documents, _base = _settled(_example(example))
    index = DocumentIndex(documents)
    nodes = [d["metadata"]["name"] for d in documents if d["kind"] == "Node"]
    rng = random.Random(f"remove-{example}")
    edited = 0
    for _ in range(12):
        changes = _random_changes(rng, documents)
        node = rng.choice(nodes)
        try:
            before = apply_changes(documents, changes, index=index).documents
            after = apply_changes(documents, [*changes, {"op": "remove-node", "node": node}],
                                  index=index).documents
        except ChangeError:
            continue  # the node or an object a change names is gone
        assert after == _removed_by_scan(documents, changes, node), (changes, node)
        edited += after != before
    assert edited >= 3


def test_removing_a_node_unbinds_a_pod_an_earlier_change_put_on_it():
    documents, _base = _settled(_example("demo.yaml"))
    node = next(d["metadata"]["name"] for d in documents if d["kind"] == "Node")
    twin = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "bound-twin", "namespace": "default"},
            "spec": {"nodeName": node, "containers": [{"name": "main", "image": "x"}]}}
    changes = [{"op": "add-object", "manifest": twin}]
    after = apply_changes(documents, [*changes, {"op": "remove-node", "node": node}],
                          index=DocumentIndex(documents)).documents
    assert after == _removed_by_scan(documents, changes, node)
    [added] = [d for d in after if d["metadata"]["name"] == "bound-twin"]
    assert "nodeName" not in added["spec"]
