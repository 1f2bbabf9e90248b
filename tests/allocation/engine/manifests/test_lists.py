"""Lists of documents (``allocation/engine/manifests/lists.py``): ``kind: List`` and the
typed lists the API returns, whose items take the list's apiVersion and kind."""

from __future__ import annotations

import json

from allocation.engine.manifests import load_texts
from allocation.engine.manifests.lists import list_item, list_items
from allocation.engine.objects import Node
from allocation.engine.objects.v1 import ResourceSlice
from tests.allocation.engine.manifests.v1_docs import device, slice_doc
from tests.factories import node, problems_of


def _bare(doc: dict) -> dict:
    """``doc`` as a typed list's item: no apiVersion, no kind."""
    return {k: v for k, v in doc.items() if k not in ("apiVersion", "kind")}


def test_which_documents_are_lists():
    assert list_items({"kind": "List", "items": [1]}) == [1]
    assert list_items({"kind": "ResourceSliceList", "items": "x"}) == "x"  # caller reports
    assert list_items({"kind": "ResourceSlice", "items": []}) is None
    assert list_items({"kind": "NodeList"}) is None
    assert list_items(["kind", "List"]) is None


def test_a_typed_lists_items_take_its_api_version_and_kind_unless_they_have_their_own():
    typed = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList", "items": []}
    assert list_item(typed, {"metadata": {"name": "s"}}) == {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"}}
    own = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}
    assert list_item(typed, own) is own
    assert list_item({"kind": "List", "items": []}, {"metadata": {}}) == {"metadata": {}}


def test_the_lists_kubectl_get_raw_returns_load_like_their_items():
    # kubectl get --raw /apis/resource.k8s.io/v1/resourceslices, /api/v1/nodes
    slices = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList",
              "metadata": {"resourceVersion": "52231"},
              "items": [_bare(slice_doc([device("gpu-0")], nodeName="node-1"))]}
    nodes = {"apiVersion": "v1", "kind": "NodeList", "metadata": {},
             "items": [_bare(node("node-1"))]}
    loaded = load_texts([("slices.json", json.dumps(slices)), ("nodes.json", json.dumps(nodes))])
    assert [type(o) for o in loaded.objects] == [ResourceSlice, Node]
    assert loaded.objects[0].to_manifest()["apiVersion"] == "resource.k8s.io/v1"


def test_a_typed_list_items_problem_names_the_item_and_its_kind():
    bad = _bare(slice_doc([device("gpu-0")], nodeName="node-1"))
    bad["spec"]["driverr"] = bad["spec"].pop("driver")
    text = json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList",
                       "items": [bad]})
    [line] = [p for p in problems_of(text, "in.json") if "driverr" in p]
    assert line.startswith("in.json:1 (ResourceSlice s1): items[0].spec.driverr: ")
