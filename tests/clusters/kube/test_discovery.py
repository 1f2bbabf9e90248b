"""clusters/kube/discovery.py: the newest version served, optional CRDs."""

from __future__ import annotations

import pytest

from clusters.kube.client import SourceError
from clusters.kube.discovery import discover


def _versions(resources):
    return {r.kind: r.api_version for r in resources}


def test_the_newest_served_version_wins(connection):
    versions = _versions(discover(connection))
    assert versions["ResourceClaim"] == "resource.k8s.io/v1"
    assert versions["DeviceClass"] == "resource.k8s.io/v1"
    assert versions["ProvisioningRequest"] == "autoscaling.x-k8s.io/v1"
    assert versions["Pod"] == "v1"


@pytest.mark.parametrize(("served", "expected"), [
    (["v1beta1"], "resource.k8s.io/v1beta1"),
    (["v1beta2", "v1beta1"], "resource.k8s.io/v1beta2"),
    (["v1alpha3", "v1beta1"], "resource.k8s.io/v1beta1"),
])
def test_older_clusters(fake, connection, served, expected):
    fake.served["resource.k8s.io"] = served
    assert _versions(discover(connection))["ResourceSlice"] == expected


def test_without_the_provisioning_crd_its_kind_is_skipped(fake, connection):
    del fake.served["autoscaling.x-k8s.io"]
    assert "ProvisioningRequest" not in _versions(discover(connection))


def test_without_dra_the_cluster_cannot_be_read(fake, connection):
    fake.served["resource.k8s.io"] = ["v1alpha3"]
    with pytest.raises(SourceError, match="serves resource.k8s.io at v1alpha3"):
        discover(connection)


def test_import_order(connection):
    kinds = [r.kind for r in discover(connection)]
    assert kinds.index("Node") < kinds.index("Pod")
    assert kinds.index("ResourceClaim") < kinds.index("Pod")
    assert kinds[0] == "Namespace"



class _Answers:
    """A connection answering each discovery path with a given document."""

    def __init__(self, answers: dict) -> None:
        self.answers = answers

    def get_json(self, path: str, query=None, verb: str = "get") -> dict:
        return self.answers[path]


def test_a_discovery_answer_of_another_shape_is_a_source_error():
    with pytest.raises(SourceError, match=r"^GET /apis/resource.k8s.io: versions is not a "
                                          r"list: 5$"):
        discover(_Answers({"/apis/resource.k8s.io": {"versions": 5}}))


def test_a_version_that_is_not_a_string_is_not_served():
    answers = {"/apis/resource.k8s.io": {"versions": [{"version": 1}, {"version": ["v1"]},
                                                      "v1", {"version": "v1beta2"}]},
               "/apis/autoscaling.x-k8s.io": {"versions": None}}
    assert _versions(discover(_Answers(answers)))["ResourceSlice"] == "resource.k8s.io/v1beta2"
