"""Core kinds as the planner reads them (``allocation/engine/objects/core.py``)."""

from __future__ import annotations

import pytest

from allocation.engine.objects.core import milli, whole


def test_requests_round_up_to_millicores_and_whole_units() -> None:
    assert milli("100m") == 100
    assert milli("1.5") == 1500
    assert milli("1n") == 1
    assert whole("100m") == 1
    assert whole("-1.5") == -1
    assert whole("16Gi") == 17179869184
    assert whole("2k") == 2000
    assert milli(2) == 2000 and whole(3) == 3  # a number is a quantity too (`cpu: 2`)
    assert milli("100m") == 100  # the remembered answer is the computed one


def test_a_bad_quantity_is_refused_every_time() -> None:
    for _ in range(2):  # an error is not remembered as an answer
        with pytest.raises(ValueError):
            milli("1.5.5")


def test_a_pods_claim_status_is_found_by_its_entrys_name() -> None:
    from allocation.engine.objects.core import Pod

    pod = Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
               "spec": {"containers": [{"name": "c"}], "resourceClaims": [
                   {"name": "gpu", "resourceClaimTemplateName": "t"},
                   {"name": "nic", "resourceClaimTemplateName": "t"}]},
               "status": {"resourceClaimStatuses": [{"name": "gpu",
                                                     "resourceClaimName": "p-gpu-x1"}]}})
    assert pod.claim_status("gpu") == {"name": "gpu", "resourceClaimName": "p-gpu-x1"}
    assert pod.claim_status("nic") is None
    assert [pod.claim_name(e) for e in pod.claims] == ["p-gpu-x1", "p-nic"]
    assert pod.claim_name("gpu") == "p-gpu-x1"


def test_a_pods_claim_name_without_statuses() -> None:
    from allocation.engine.objects.core import Pod

    pod = Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
               "spec": {"containers": [{"name": "c"}], "resourceClaims": [
                   {"name": "gpu", "resourceClaimTemplateName": "t"},
                   {"name": "nic", "resourceClaimName": "shared-nic"}]}})
    assert [pod.claim_name(e) for e in pod.claims] == ["p-gpu", "shared-nic"]
    assert pod.claim_name("gpu") == "p-gpu"


@pytest.mark.parametrize(("containers", "init", "expected"), [
    ([{"cpu": "1"}], [], False),
    ([{"cpu": "1", "memory": "1Gi"}], [{"memory": "2Gi"}], False),
    ([{"cpu": "1", "example.com/gpu": "1"}], [], True),
    ([{"cpu": "1"}], [{"example.com/gpu": "1"}], True),  # an init container's counts too
    ([{"hugepages-2Mi": "1Gi"}], [], False),  # no domain: never an extended resource
])
def test_a_pod_knows_whether_it_requests_a_name_with_a_domain(containers, init,
                                                                expected) -> None:
    """``domain_requests`` (read with the cpu and memory requests) rules out the extended
    resources of most pods before ``v1_extended.wanted`` walks the containers again."""
    from allocation.engine.objects import Pod

    def spec(requests: list[dict]) -> list[dict]:
        return [{"name": f"c{i}", "resources": {"requests": r}} for i, r in enumerate(requests)]

    pod = Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": spec(containers), "initContainers": spec(init)}})
    assert pod.domain_requests is expected
