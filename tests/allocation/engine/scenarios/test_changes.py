from __future__ import annotations

import copy

import pytest

from allocation.engine.scenarios import ChangeError, apply_changes, pinned_node
from tests.allocation.engine.scenarios.cluster import baseline_documents
from tests.factories import node


def _by_key(docs):
    return {(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]): d for d in docs}


def test_changes_never_touch_the_baseline_and_share_what_they_do_not_change():
    docs = baseline_documents()
    before = copy.deepcopy(docs)
    applied = apply_changes(docs, [{"op": "pin-pod", "pod": "default/p0", "node": "worker-2"},
                                   {"op": "remove-node", "node": "worker-1"}])
    assert docs == before
    untouched = _by_key(docs)[("ResourceClass", None, "gpu")]
    assert any(d is untouched for d in applied.documents)  # shared, not copied
    by_key = _by_key(applied.documents)
    assert ("Node", None, "worker-1") not in by_key
    assert pinned_node(by_key[("Pod", "default", "p0")]) == "worker-2"
    assert "nodeName" not in by_key[("Pod", "default", "p0")]["spec"]


def test_unbinding_drops_the_pods_reservations():
    applied = apply_changes(baseline_documents(), [{"op": "unpin-pod", "pod": "p0"}])
    claim = _by_key(applied.documents)[("ResourceClaim", "default", "p0-gpu")]
    assert "reservedFor" not in claim["status"]
    assert "nodeName" not in _by_key(applied.documents)[("Pod", "default", "p0")]["spec"]


def test_add_nodes_copies_the_template_nodes_resources():
    group = {"apiVersion": "draplanner.io/v1alpha1", "kind": "NodeGroup",
             "metadata": {"name": "pool"},
             "spec": {"minSize": 0, "maxSize": 2, "capacityFromNode": "worker-1",
                      "template": {"metadata": {"labels": {"tier": "gpu"}}}}}
    docs = baseline_documents(pods=0, extra=[group])
    applied = apply_changes(docs, [{"op": "add-nodes", "group": "pool", "count": 2}])
    assert applied.added_nodes == ["pool-1", "pool-2"]
    by_key = _by_key(applied.documents)
    assert by_key[("Node", None, "pool-2")]["metadata"]["labels"] == {
        "tier": "gpu", "draplanner.io/node-group": "pool"}
    copied = by_key[("NodeResourceSlice", None, "pool-1-slice-0")]
    assert copied["spec"]["nodeName"] == "pool-1"
    beyond = apply_changes(docs, [{"op": "add-nodes", "group": "pool", "count": 2},
                                  {"op": "add-nodes", "group": "pool", "count": 1}])
    assert beyond.added_nodes == ["pool-1", "pool-2", "pool-3"]  # what-if ignores maxSize


def test_edit_selector_and_set_strategy():
    applied = apply_changes(baseline_documents(), [
        {"op": "edit-selector", "kind": "ResourceClaimParameters", "object": "default/big",
         "path": "requests[0].namedResourcesWithAttributes.required[0].selector",
         "expression": 'attributes["memory"] >= "64Gi"'},
        {"op": "set-strategy", "strategy": "best-fit"}])
    params = _by_key(applied.documents)[("ResourceClaimParameters", "default", "big")]
    assert params["requests"][0]["namedResourcesWithAttributes"]["required"][0][
        "selector"] == 'attributes["memory"] >= "64Gi"'
    assert applied.strategy == "best-fit"


@pytest.mark.parametrize(("change", "message"), [
    ({"op": "explode"}, "changes[0].op: unknown operation 'explode'"),
    ({"op": "pin-pod", "pod": "default/p0"}, "changes[0].node: required field is missing"),
    ({"op": "pin-pod", "pod": "default/nope", "node": "worker-1"},
     "changes[0].pod: pod default/nope not found"),
    ({"op": "pin-pod", "pod": "default/p0", "node": "nowhere"},
     "changes[0].node: node 'nowhere' not found"),
    ({"op": "add-nodes", "group": "ghost", "count": 1},
     "changes[0].group: node group 'ghost' not found"),
    ({"op": "add-nodes", "group": "g", "count": 0}, "changes[0].count: must be an integer"),
    ({"op": "set-strategy", "strategy": "worst-fit"}, "changes[0].strategy: must be one of"),
    ({"op": "edit-selector", "kind": "ResourceClaimParameters", "object": "default/big",
      "path": "requests[3].namedResourcesWithAttributes.required[0].selector",
      "expression": "true"}, "changes[0].path: "),
    ({"op": "remove-node", "node": "ghost"}, "changes[0].node: node 'ghost' not found"),
    ({"op": "add-object", "manifest": {"kind": "Pod"}}, "changes[0].manifest: needs kind"),
])
def test_bad_changes_name_the_change_and_field(change, message):
    docs = baseline_documents(pods=1)
    with pytest.raises(ChangeError) as caught:
        apply_changes(docs, [change])
    assert str(caught.value).startswith(message)


def test_add_object_replaces_an_object_of_the_same_identity():
    docs = baseline_documents(pods=0)
    applied = apply_changes(docs, [{"op": "add-object", "manifest": node("worker-1", cpu="2")}])
    nodes = [d for d in applied.documents if d["kind"] == "Node"]
    assert [n["metadata"]["name"] for n in nodes] == ["worker-1", "worker-2"]
    assert nodes[0]["status"]["allocatable"]["cpu"] == "2"


def test_a_kept_index_gives_what_keying_the_documents_again_gives():
    from allocation.engine.scenarios.documents import DocumentIndex

    docs = baseline_documents()
    index = DocumentIndex(docs)
    changes = [{"op": "pin-pod", "pod": "default/p0", "node": "worker-2"},
               {"op": "remove-object", "kind": "Pod", "name": "p1"},
               {"op": "add-object", "manifest": node("worker-9")}]
    fresh = apply_changes(docs, changes)
    for _ in range(2):  # the index is not changed by a use
        kept = apply_changes(docs, changes, index=index)
        assert kept.documents == fresh.documents
        assert all(a is b for a, b in zip(kept.documents, fresh.documents, strict=True)
                   if any(a is d for d in docs))
    other = copy.deepcopy(docs)[:-1]  # an index of other documents is not used
    assert apply_changes(other, [], index=index).documents == other
