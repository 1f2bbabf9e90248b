from __future__ import annotations

import pytest

from allocation.engine.scenarios import OPS, ChangeError, read
from allocation.engine.scenarios.operations import OPERATIONS

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
     "changes[2].count: must be an integer from 1 to 100"),
    ({"op": "add-nodes", "group": "g", "count": 101},
     "changes[2].count: must be an integer from 1 to 100"),
    ({"op": "set-strategy", "strategy": "worst-fit"},
     "changes[2].strategy: must be one of first-fit, best-fit"),
    ({"op": "add-object", "manifest": "kind: Pod"},
     "changes[2].manifest: must be a manifest object"),
    ({"op": "edit-selector", "kind": "DeviceClass", "object": "gpu", "path": "spec.name",
      "expression": "true"}, "changes[2].path: must name a selector field"),
])
def test_a_malformed_change_names_its_index_and_field(change, message):
    with pytest.raises(ChangeError) as raised:
        read(change, 2)
    assert str(raised.value) == message
