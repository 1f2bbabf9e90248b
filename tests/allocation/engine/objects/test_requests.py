"""A pod's requests as kube-scheduler reads them (``allocation/engine/objects/requests.py``)."""

from __future__ import annotations

from allocation.engine.objects.requests import container_requests, pod_requests


def _c(requests: dict | None = None, limits: dict | None = None, sidecar: bool = False
       ) -> dict:
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    container: dict = {"name": "c", "resources": resources}
    if sidecar:
        container["restartPolicy"] = "Always"
    return container


def test_a_limit_without_a_request_is_requested_at_the_limit():
    assert container_requests(_c({"cpu": "1"}, {"cpu": "2", "example.com/gpu": "1"})) == {
        "cpu": "1", "example.com/gpu": "1"}
    assert container_requests(_c(limits={"memory": "1Gi"})) == {"memory": "1Gi"}
    assert container_requests({"name": "bare"}) == {}


def test_regular_containers_add_up_and_an_init_container_runs_alone():
    spec = {"containers": [_c({"cpu": "1", "memory": "1Gi"}), _c({"cpu": "500m"})],
            "initContainers": [_c({"cpu": "2"}), _c({"memory": "512Mi"})]}
    assert pod_requests(spec) == {"cpu": 2000, "memory": 1 << 30}


def test_a_sidecar_adds_to_the_pod_and_to_the_init_containers_after_it():
    spec = {"containers": [_c({"cpu": "1"})],
            "initContainers": [_c({"cpu": "1"}), _c({"cpu": "500m"}, sidecar=True),
                               _c({"cpu": "1"}), _c(limits={"example.com/gpu": "1"})]}
    # regular 1 + sidecar 0.5 = 1.5; the init container after the sidecar needs 1 + 0.5
    assert pod_requests(spec) == {"cpu": 1500, "example.com/gpu": 1}
    spec["initContainers"][2] = _c({"cpu": "2"})
    assert pod_requests(spec)["cpu"] == 2500


def test_pod_level_requests_replace_cpu_and_memory_and_overhead_adds():
    spec = {"containers": [_c({"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi"})],
            "resources": {"limits": {"cpu": "4"}, "requests": {"memory": "2Gi"}},
            "overhead": {"cpu": "250m"}}
    assert pod_requests(spec) == {"cpu": 4250, "memory": 2 << 30, "ephemeral-storage": 1 << 30}
