"""A template claim's controller owner (``engine/claims_v1.py``), matched by uid as
upstream's ``resourceclaim.IsForPod`` matches it."""

from __future__ import annotations

from allocation.engine.constants import POD_CLAIM_NAME_ANNOTATION
from allocation.engine.objects.meta import stable_uid
from allocation.engine.simulation import simulate
from tests.allocation.engine.manifests.v1_docs import load, request
from tests.factories import node


def test_a_made_claim_owned_by_the_pods_uid_under_another_name_is_the_pods():
    # A stored claim whose owner reference names another pod (a renamed pod fed back in)
    # is still this pod's; the simulation re-recorded it every round and never settled.
    uid = stable_uid("Pod", "default", "infer-1")
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "t", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [request()]}}}}
    waiting = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "infer-1", "namespace": "default", "uid": uid},
               "spec": {"containers": [{"name": "main", "image": "example/app"}],
                        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}}
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "infer-1-gpu-782gq", "namespace": "default",
                          "annotations": {POD_CLAIM_NAME_ANNOTATION: "gpu"},
                          "ownerReferences": [{"apiVersion": "v1", "kind": "Pod",
                                               "name": "train-1", "uid": uid,
                                               "controller": True}]},
             "spec": {}, "status": {"allocation": {}, "reservedFor": [
                 {"resource": "pods", "name": "infer-1", "uid": uid}]}}
    result = simulate(load([node("node-b"), template, waiting, claim]))
    items = result.output()["items"]
    claims = [i["metadata"]["name"] for i in items if i["kind"] == "ResourceClaim"]
    assert claims == ["infer-1-gpu-782gq"]
    [found] = [i for i in items if i["kind"] == "Pod"]
    assert found["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": "infer-1-gpu-782gq"}]
