"""Builders of small resource.k8s.io/v1 documents for the v1 manifest tests."""

from __future__ import annotations

from allocation.engine.manifests import InvalidManifests, LoadResult, load_texts
from allocation.engine.v1 import make_profile
from tests.factories import to_yaml

V1 = "resource.k8s.io/v1"


def device(name: str = "gpu-0", **fields) -> dict:
    return {"name": name, **fields}


def slice_doc(devices: list | None = None, name: str = "s1", **spec) -> dict:
    body = {"driver": "gpu.example.com", "pool": {"name": "node-1", "resourceSliceCount": 1}}
    if not ({"nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection"} & set(spec)):
        body["nodeName"] = "node-1"
    body.update(spec)
    if devices is not None:
        body["devices"] = devices
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": body}


def class_doc(name: str = "gpu", **spec) -> dict:
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": spec}


def request(name: str = "r", **exactly) -> dict:
    return {"name": name, "exactly": {"deviceClassName": "gpu", **exactly}}


def claim_doc(requests: list | None = None, name: str = "c", namespace: str = "default",
              status: dict | None = None, **devices) -> dict:
    body = {"requests": requests if requests is not None else [request()], **devices}
    doc = {"apiVersion": V1, "kind": "ResourceClaim",
           "metadata": {"name": name, "namespace": namespace}, "spec": {"devices": body}}
    if status is not None:
        doc["status"] = status
    return doc


def load(docs: list[dict], release: str = "1.36", gates: str = "") -> LoadResult:
    return load_texts([("v1.yaml", to_yaml(docs))], make_profile(release, gates))


def problems(docs: list[dict], release: str = "1.36", gates: str = "") -> list[str]:
    """The problem lines (after ``v1.yaml:N (Kind name): ``) of loading ``docs``."""
    try:
        load(docs, release, gates)
    except InvalidManifests as exc:
        return [f"{p.path}: {p.message}" for p in exc.problems]
    return []
