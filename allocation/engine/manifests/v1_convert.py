"""Reading the v1 kinds: older versions converted to v1, gated fields dropped, defaults set.

``prepare`` turns a DeviceClass, ResourceSlice, ResourceClaim or ResourceClaimTemplate of
``resource.k8s.io/v1beta1``, ``v1beta2`` or ``v1`` into the v1 document the API server
would store (spec section 6, input versions; docs/v1.md, reading v1 manifests):

- v1beta2 has v1's shape; v1beta1 wraps a device's fields in ``basic`` and puts a
  request's fields directly on the request instead of in ``exactly``;
- the fields of disabled feature gates are dropped, each with a warning
  (``allocation.engine.v1.gated``), as the API server drops them on create;
- API-server defaults are set (``allocationMode: ExactCount``, ``count: 1`` also for a
  count of 0, a toleration's
  ``operator: Equal``, a pool's ``generation: 0``, a taint's ``timeAdded``);
- a quantity written as a JSON number (``value: 80``, as the API server takes it) becomes
  its text, and a null policy bound (``max:`` left empty) is absent, as Go decodes a null
  pointer, so that everything after the schema reads quantities as texts.

Conversion and defaulting touch only well-formed parts; anything else is left for the
schema to report. Problems are found on the v1 document; ``source_path`` maps their paths
back to the v1beta1 document the user wrote.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from allocation.engine import kinds
from allocation.engine.constants import RESOURCE_GROUP
from allocation.engine.objects.meta import json_copy
from allocation.engine.v1.features import Profile
from allocation.engine.v1.gated import as_mapping, drop_disabled_fields, mappings

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
        for _index, device in mappings(spec.get("devices")):
            basic = device.pop("basic", None)
            if isinstance(basic, dict):
                for key, value in basic.items():
                    device.setdefault(key, value)
            elif basic is not None:
                device["basic"] = basic  # the schema reports it
    elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
        claim_spec = as_mapping(spec.get("spec")) if kind == "ResourceClaimTemplate" else spec
        for _index, request in mappings(as_mapping(claim_spec.get("devices")).get("requests")):
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
    if request.get("capacity"):  # rare: the loop below costs every request otherwise
        wanted = as_mapping(as_mapping(request["capacity"]).get("requests"))
        for name, amount in wanted.items():
            wanted[name] = _number_text(amount)
    # SetDefaults_ExactDeviceRequest and _DeviceSubRequest: an empty mode is ExactCount,
    # and ExactCount's count 0 is 1 (absent, null and 0 are all Go's zero)
    if _unset(request.get("allocationMode"), ""):
        request["allocationMode"] = "ExactCount"
    if request["allocationMode"] == "ExactCount" and _unset(request.get("count"), 0):
        request["count"] = 1
    if request.get("tolerations"):
        for _index, toleration in mappings(request["tolerations"]):
            if _unset(toleration.get("operator"), ""):
                toleration["operator"] = "Equal"  # the field's +default


def _unset(value: Any, zero: str | int) -> bool:
    """Whether ``value`` is absent, null or Go's zero value ``zero`` (not a bool that
    equals 0: that is the schema's to refuse)."""
    return value is None or (value == zero and type(value) is type(zero))


def _defaults(doc: dict) -> None:
    kind = doc.get("kind")
    spec = doc.get("spec")
    if kind == "ResourceSlice" and isinstance(spec, dict):
        pool = spec.get("pool")
        if isinstance(pool, dict) and pool.get("generation") is None:
            pool["generation"] = 0  # absent or null: Go's int64 decodes both as 0
        added = as_mapping(doc.get("metadata")).get("creationTimestamp") or DEFAULT_TIME_ADDED
        for _index, device in mappings(spec.get("devices")):
            # every device of a cluster: each step only where its field is there
            if device.get("taints"):
                for _position, taint in mappings(device["taints"]):
                    taint.setdefault("timeAdded", added)
            capacity = device.get("capacity")
            if capacity and type(capacity) is dict:
                for entry in capacity.values():
                    if type(entry) is not dict or type(entry.get("value")) is not str \
                            or "requestPolicy" in entry:
                        _quantity_texts(entry)
            if device.get("consumesCounters"):
                for _position, use in mappings(device["consumesCounters"]):
                    _counter_texts(use)
        for _index, counter_set in mappings(spec.get("sharedCounters")):
            _counter_texts(counter_set)
    elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
        claim_spec = spec.get("spec") if kind == "ResourceClaimTemplate" and \
            isinstance(spec, dict) else spec
        if isinstance(claim_spec, dict) and claim_spec.get("devices") is None:
            # a struct in Go, not a pointer: absent or null, the API server writes it empty
            # (a claim of no request, allocated with no device, as upstream allocates it)
            claim_spec["devices"] = {}
        for _index, request in mappings(as_mapping(_claim_devices(doc)).get("requests")):
            if isinstance(request.get("exactly"), dict):
                _default_request(request["exactly"])
            if request.get("firstAvailable"):
                for _position, sub in mappings(request["firstAvailable"]):
                    _default_request(sub)


def _number_text(value: Any) -> Any:
    """A quantity given as a finite JSON number, as text (``str``, as the schema parses
    it); anything else unchanged, for the schema to judge."""
    if type(value) is str or isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if isinstance(value, int):  # always finite (``isfinite`` overflows past 1e308)
        return str(value)
    return str(value) if math.isfinite(value) else value


def _counter_texts(owner: dict) -> None:
    """``counters: {name: {value}}`` of a counter set or of a device's consumption."""
    for counter in as_mapping(owner.get("counters")).values():
        if isinstance(counter, dict) and "value" in counter:
            counter["value"] = _number_text(counter["value"])


def _quantity_texts(capacity: Any) -> None:
    """A device capacity ``{value, requestPolicy}``."""
    if not isinstance(capacity, dict):
        return
    if "value" in capacity:
        capacity["value"] = _number_text(capacity["value"])
    policy = capacity.get("requestPolicy")
    if not isinstance(policy, dict):
        return
    _bounds(policy, ("default",))
    values = policy.get("validValues")
    if isinstance(values, list):
        policy["validValues"] = [_number_text(v) for v in values]
    if isinstance(policy.get("validRange"), dict):
        _bounds(policy["validRange"], ("min", "max", "step"))


def _bounds(owner: dict, names: tuple[str, ...]) -> None:
    """Optional quantities (Go pointers): null is absent, a number its text."""
    for name in names:
        if name in owner:
            if owner[name] is None:
                del owner[name]
            else:
                owner[name] = _number_text(owner[name])
