"""Shared helpers of the control-plane package."""

from __future__ import annotations

from allocation.engine.controlplane.common import new_context, short_list
from allocation.engine.objects import Pod
from tests.factories import pod


def test_short_list_keeps_messages_readable():
    assert short_list([]) == "none"
    assert short_list(["a", "b"]) == "a, b"
    assert short_list([f"n{i}" for i in range(10)], limit=3) == "n0, n1, n2 and 7 more"


def test_new_context_is_named_after_and_owned_by_its_pod():
    p = Pod(pod("p", namespace="team"))
    p.meta.uid = "uid-1"
    doc = new_context(p).to_manifest()
    assert doc["metadata"]["name"] == "p" and doc["metadata"]["namespace"] == "team"
    assert doc["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "uid-1", "controller": True,
         "blockOwnerDeletion": True}]
    assert doc["spec"] == {}
