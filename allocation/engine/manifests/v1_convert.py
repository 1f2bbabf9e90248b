"""Reading the v1 kinds: older versions converted to v1, gated fields dropped, defaults set.

``prepare`` turns a DeviceClass, ResourceSlice, ResourceClaim or ResourceClaimTemplate of
``resource.k8s.io/v1beta1``, ``v1beta2`` or ``v1`` into the v1 document the API server
would store (spec section 6, input versions; docs/v1.md, reading v1 manifests):

- v1beta2 has v1's shape; v1beta1 wraps a device's fields in ``basic`` and puts a
  request's fields directly on the request instead of in ``exactly``;
- the fields of disabled feature gates are dropped, each with a warning
  (``allocation.engine.v1.gated``), as the API server drops them on create;
- API-server defaults are set (``allocationMode: ExactCount``, ``count: 1``, a toleration's
  ``operator: Equal``, a pool's ``generation: 0``, a taint's ``timeAdded``).

Conversion and defaulting touch only well-formed parts; anything else is left for the
schema to report. Problems are found on the v1 document; ``source_path`` maps their paths
back to the v1beta1 document the user wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from allocation.engine import kinds
from allocation.engine.constants import RESOURCE_GROUP
from allocation.engine.objects.meta import json_copy
from allocation.engine.v1.features import Profile
from allocation.engine.v1.gated import drop_disabled_fields

__all__ = ["Prepared", "prepare", "is_v1_kind", "source_path", "V1_API_VERSION",
           "DEFAULT_TIME_ADDED"]

V1_API_VERSION = f"{RESOURCE_GROUP}/v1"
DEFAULT_TIME_ADDED = "1970-01-01T00:00:00Z"
"""A taint's ``timeAdded`` when the slice has no ``creationTimestamp`` either: the API
server writes the time of creation, which a file does not have; a fixed value keeps the
output deterministic."""

_V1BETA1 = f"{RESOURCE_GROUP}/v1beta1"
_EXACT_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess",
                 "tolerations", "capacity")


@dataclass
class Prepared:
    """The v1 document and the ``(path, gate)`` of each field dropped for its gate."""

    data: dict
    dropped: list[tuple[str, str]] = field(default_factory=list)
    original_version: str = V1_API_VERSION


def is_v1_kind(data: object) -> bool:
    """Whether ``data`` is a document of one of the v1 kinds, in any served version."""
    if not isinstance(data, dict):
        return False
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return False
    return kinds.lookup(api_version, kind) in kinds.V1_KIND_SET


def prepare(data: dict, profile: Profile, owned: bool = False) -> Prepared:
    """The v1 form of a v1-kind document (see the module docstring); ``data`` is not
    changed, unless ``owned``: then its parts are changed in place rather than copied,
    for a caller whose document no one else holds and no part of which appears twice
    (just read from a text without YAML aliases; ``RawDocument.fresh``)."""
    version = data["apiVersion"]
    doc = dict(data) if owned else _copy(data)
    if version == _V1BETA1:
        _from_v1beta1(doc)
    doc["apiVersion"] = V1_API_VERSION
    doc, dropped = drop_disabled_fields(doc, profile, in_place=True)  # doc is our copy
    _defaults(doc)
    return Prepared(doc, dropped, version)


def _copy(data: dict) -> dict:
    """A copy of ``data`` to convert, drop gated fields from and default: a new top level
    and a deep copy of ``spec``, the only part those steps change; ``metadata`` (with the
    API server's ``managedFields``, often the largest part of a document read from a
    cluster) and ``status`` are shared, read-only as every loaded document's parts are (an
    engine object copies the status it changes). Copying them was most of an import's
    conversion time (docs/live-cluster.md, "Speed of an import")."""
    return {key: json_copy(value) if key == "spec" else value for key, value in data.items()}


_DEVICE_PATH = re.compile(r"^(spec\.devices\[\d+\])\.(?!name(?:$|[.\[]))")
_EXACT_PATH = re.compile(r"^((?:spec\.)?spec\.devices\.requests\[\d+\])\.exactly(?=$|[.\[])")


def source_path(path: str, original_version: str) -> str:
    """The path in the document as written of the v1 field at ``path``: a v1beta1 device's
    fields sit in ``basic``, a v1beta1 request's ``exactly`` fields on the request."""
    if original_version != _V1BETA1:
        return path
    path = _DEVICE_PATH.sub(r"\1.basic.", path)
    return _EXACT_PATH.sub(r"\1", path)


def _from_v1beta1(doc: dict) -> None:
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return
    kind = doc.get("kind")
    if kind == "ResourceSlice":
        for device in spec.get("devices") or ():
            basic = device.pop("basic", None) if isinstance(device, dict) else None
            if isinstance(basic, dict):
                for key, value in basic.items():
                    device.setdefault(key, value)
            elif basic is not None:
                device["basic"] = basic  # the schema reports it
    elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
        claim_spec = spec.get("spec") if kind == "ResourceClaimTemplate" else spec
        devices = claim_spec.get("devices") if isinstance(claim_spec, dict) else None
        for request in (devices or {}).get("requests") or () if isinstance(devices, dict) \
                else ():
            if not isinstance(request, dict):
                continue
            exactly = {key: request.pop(key) for key in _EXACT_FIELDS if key in request}
            if exactly or "firstAvailable" not in request:
                request["exactly"] = exactly


def _claim_devices(doc: dict) -> dict | None:
    spec = doc.get("spec")
    if doc.get("kind") == "ResourceClaimTemplate" and isinstance(spec, dict):
        spec = spec.get("spec")
    devices = spec.get("devices") if isinstance(spec, dict) else None
    return devices if isinstance(devices, dict) else None


def _default_request(request: dict) -> None:
    request.setdefault("allocationMode", "ExactCount")
    if request["allocationMode"] == "ExactCount":
        request.setdefault("count", 1)
    for toleration in request.get("tolerations") or ():
        if isinstance(toleration, dict):
            toleration.setdefault("operator", "Equal")


def _defaults(doc: dict) -> None:
    kind = doc.get("kind")
    spec = doc.get("spec")
    if kind == "ResourceSlice" and isinstance(spec, dict):
        pool = spec.get("pool")
        if isinstance(pool, dict):
            pool.setdefault("generation", 0)
        meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        added = meta.get("creationTimestamp") or DEFAULT_TIME_ADDED
        for device in spec.get("devices") or ():
            for taint in (device.get("taints") or ()) if isinstance(device, dict) else ():
                if isinstance(taint, dict):
                    taint.setdefault("timeAdded", added)
    elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
        devices = _claim_devices(doc)
        for request in (devices or {}).get("requests") or ():
            if not isinstance(request, dict):
                continue
            if isinstance(request.get("exactly"), dict):
                _default_request(request["exactly"])
            for sub in request.get("firstAvailable") or ():
                if isinstance(sub, dict):
                    _default_request(sub)
