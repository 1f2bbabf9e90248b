"""Extended resources backed by DRA: routing per node, class choice, request names."""

from __future__ import annotations

from allocation.engine.v1.extended import (
    class_for_extended_resource,
    extended_resource_requests,
    extended_resource_route,
)


def _cls(name: str, resource: str | None = None, created: str = "2025-01-01T00:00:00Z"):
    spec = {"extendedResourceName": resource} if resource else {}
    return {"metadata": {"name": name, "creationTimestamp": created}, "spec": spec}


def test_newest_class_wins_then_the_smaller_name():
    classes = [_cls("b", "example.com/gpu", "2025-01-02T00:00:00Z"),
               _cls("a", "example.com/gpu", "2025-01-01T00:00:00Z"),
               _cls("c", "example.com/gpu", "2025-01-02T00:00:00Z")]
    assert class_for_extended_resource("example.com/gpu", classes)["metadata"]["name"] == "b"


def test_implicit_name():
    assert class_for_extended_resource("deviceclass.resource.kubernetes.io/x",
                                       [_cls("x")])["metadata"]["name"] == "x"


def test_device_plugin_first_then_dra_then_no_fit():
    node = {"metadata": {"name": "n"}, "status": {"allocatable": {"example.com/gpu": "2"}}}
    assert extended_resource_route("example.com/gpu", node, [])[0] == "device-plugin"
    bare = {"metadata": {"name": "n"}}
    assert extended_resource_route("example.com/gpu", bare, [_cls("g", "example.com/gpu")]
                                   )[0] == "dra"
    assert extended_resource_route("example.com/gpu", bare, [])[0] == "none"


def test_request_names_sort_as_strings():
    containers = [{"name": f"c{i}", "resources": {"requests": {
        "cpu": "1", "example.com/gpu": "1"}}} for i in range(11)]
    pod = {"spec": {"containers": containers}}
    reqs = extended_resource_requests(pod, {"metadata": {"name": "n"}},
                                      [_cls("g", "example.com/gpu")])
    names = [r["name"] for r in reqs]
    assert names[:3] == ["container-0-request-1", "container-1-request-1",
                         "container-10-request-1"]
    assert reqs[0]["exactly"] == {"deviceClassName": "g", "allocationMode": "ExactCount",
                                  "count": 1}
    assert extended_resource_requests(pod, {"metadata": {"name": "n"}}, []) is None
