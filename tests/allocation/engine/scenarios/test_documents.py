"""allocation/engine/scenarios/documents.py: unbinding a pod through the baseline's index of
reservations edits the very claims a scan of every claim would."""

from __future__ import annotations

import copy
import random

import pytest

from allocation.engine.objects import ObjectKey
from allocation.engine.scenarios import ChangeError, apply_changes
from allocation.engine.scenarios.documents import (
    Applied,
    DocumentIndex,
    Documents,
    key_of,
    unbind,
)
from tests.allocation.engine.scenarios.test_fork import _example, _random_changes


def _claim(name: str, namespace: str, *pods: str, v1: bool = False) -> dict:
    return {"apiVersion": "resource.k8s.io/v1" if v1 else "resource.k8s.io/v1alpha2",
            "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace,
                         **({"finalizers": ["resource.kubernetes.io/delete-protection"]}
                            if v1 else {})},
            "spec": {},
            "status": {"allocation": {}, "reservedFor": [
                {"resource": "pods", "name": pod, "uid": pod} for pod in pods]}}


def _pod(name: str, namespace: str = "default") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"nodeName": "n1", "containers": []}, "status": {"phase": "Running"}}


def _scanned(docs: Documents, key: ObjectKey) -> None:
    """The reference: every claim of the pod's namespace looked at (the former unbind)."""
    pod = docs.writable(key)
    pod["spec"].pop("nodeName", None)
    pod.pop("status", None)
    for claim_key in docs.of_kind("ResourceClaim"):
        if claim_key.namespace != key.namespace:
            continue
        reserved = (docs.by_key[claim_key].get("status") or {}).get("reservedFor") or []
        if any(r.get("resource") == "pods" and r.get("name") == key.name for r in reserved):
            status = docs.writable(claim_key)["status"]
            status["reservedFor"] = [r for r in reserved if r.get("name") != key.name]
            if not status["reservedFor"]:
                del status["reservedFor"]
                if claim_key.name == "v1-only":
                    status.pop("allocation", None)
                    del docs.by_key[claim_key]["metadata"]["finalizers"]


BASE = [_pod("web"), _pod("web", "other"), _claim("shared", "default", "web", "db"),
        _claim("only", "default", "web"), _claim("v1-only", "default", "web", v1=True),
        _claim("theirs", "other", "web"), _claim("unrelated", "default", "db"),
        _claim("gone", "default", "web")]


def _edited(edit) -> dict[ObjectKey, dict]:
    documents = copy.deepcopy(BASE)
    docs = Documents(documents, DocumentIndex(documents))
    docs.put(_claim("added", "default", "web"))  # an earlier change's claim
    docs.writable(key_of(documents[6]))["status"]["reservedFor"].append(
        {"resource": "pods", "name": "web", "uid": "web"})  # an earlier change's edit
    docs.remove(key_of(documents[7]))
    edit(docs, key_of(documents[0]))
    return {key: docs.by_key[key] for key in docs.order if key in docs.by_key}


def test_unbind_edits_what_a_scan_of_every_claim_edits() -> None:
    indexed, scanned = _edited(unbind), _edited(_scanned)

    assert indexed == scanned
    reserved = {key.name: doc["status"].get("reservedFor") for key, doc in indexed.items()
                if key.kind == "ResourceClaim"}
    assert reserved == {"shared": [{"resource": "pods", "name": "db", "uid": "db"}],
                        "only": None, "v1-only": None,
                        "theirs": [{"resource": "pods", "name": "web", "uid": "web"}],
                        "unrelated": [{"resource": "pods", "name": "db", "uid": "db"}],
                        "added": None}


def test_the_index_names_the_claims_reserved_for_a_pod() -> None:
    index = DocumentIndex(BASE)

    assert [k.name for k in index.reserving("default", "web")] == ["shared", "only", "v1-only",
                                                                    "gone"]
    assert [k.name for k in index.reserving("other", "web")] == ["theirs"]
    assert index.reserving("default", "nobody") == []


@pytest.mark.parametrize("example", ["demo.yaml", "quickstart.yaml", "v1-gpus.yaml"])
def test_the_edits_account_of_what_changed_equals_a_scan_of_both_lists(example) -> None:
    documents = _example(example)
    rng = random.Random(f"delta-{example}")
    checked = 0
    for _ in range(30):
        changes = _random_changes(rng, documents)
        # a removed object added again goes last, as a new one: exercised every time
        if rng.random() < 0.3:
            pod = next(d for d in documents if d.get("kind") == "Pod")
            again = copy.deepcopy(pod)
            meta = again["metadata"]
            changes += [{"op": "remove-object", "kind": "Pod", "name": meta["name"],
                         "namespace": meta.get("namespace", "default")},
                        {"op": "add-object", "manifest": again}]
        try:
            applied = apply_changes(documents, changes)
        except ChangeError:
            continue
        base = {id(d) for d in documents}
        kept = {id(d) for d in applied.documents}
        assert applied.delta is not None and applied.delta.of is documents
        assert [id(d) for d in applied.delta.fresh] == [
            id(d) for d in applied.documents if id(d) not in base], changes
        assert applied.delta.gone == [i for i, d in enumerate(documents)
                                      if id(d) not in kept], changes
        checked += bool(applied.delta.fresh or applied.delta.gone)
    assert checked >= 10


def test_a_baseline_with_two_documents_of_one_key_is_left_to_the_scan() -> None:
    documents = [_pod("a"), _pod("a"), _pod("b")]
    docs = Documents(documents)
    docs.writable(key_of(documents[2]))
    assert DocumentIndex(documents).shadowed == [0]
    assert docs.delta() is None


def test_the_documents_are_those_of_every_key_in_order_with_a_document() -> None:
    """``Documents.documents`` without a test per key (nothing removed, or every removed
    key put back) gives what looking each key up gives; with a key removed, it is left
    out."""
    def reference(docs: Documents) -> list[dict]:
        return [docs.by_key[k] for k in docs.order if k in docs.by_key]

    documents = copy.deepcopy(BASE)
    edits = [lambda d: None,
             lambda d: d.writable(key_of(documents[1])),
             lambda d: d.put(_claim("added", "default", "web")),
             lambda d: d.remove(key_of(documents[3])),
             lambda d: (d.remove(key_of(documents[3])), d.put(copy.deepcopy(documents[3])))]
    for edit in edits:
        docs = Documents(documents, DocumentIndex(documents))
        edit(docs)
        assert [id(d) for d in docs.documents()] == [id(d) for d in reference(docs)]
    docs = Documents(documents, DocumentIndex(documents))
    docs.remove(key_of(documents[3]))
    assert documents[3] not in docs.documents() and len(docs.documents()) == len(BASE) - 1


def test_applied_documents_are_listed_once_the_changes_are_applied():
    with pytest.raises(ValueError, match="not applied"):
        assert not Applied().documents
