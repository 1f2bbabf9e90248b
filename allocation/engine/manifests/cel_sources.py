"""Where a document holds CEL: the field path, the text, and what it compiles as.

One place that knows every CEL field of the planner's kinds, for whoever shows, edits or
checks them one by one (the admin's CEL fields, the unknown-attribute warnings of
:mod:`~allocation.engine.manifests.attribute_names`); the loader itself compiles them while
validating (docs/cel.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CelSource", "cel_sources", "TEMPLATE_EXPRESSION"]

#: One ``{{ expression }}`` of a numeric class's ``celTemplate``.
TEMPLATE_EXPRESSION = re.compile(r"\{\{(.*?)\}\}", re.S)


@dataclass(frozen=True)
class CelSource:
    """One CEL text in a document: its field path, text and what it must compile as:
    ``selector`` (a seed selector over ``attributes``/``strings``/...), ``device selector``
    (a resource.k8s.io/v1 selector over ``device``), ``expression`` (over ``object``) or
    ``template`` (a text with ``{{ expression }}`` parts)."""

    path: str
    source: str
    kind: str


def _model_entries(entry: dict):
    return [(k, v) for k, v in entry.items() if k != "driverName" and isinstance(v, dict)]


def _mapping(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def cel_sources(kind: str, doc: dict) -> list[CelSource]:
    """Every CEL text of a document of ``kind``, in document order. Returns [] for kinds
    without CEL; fields of the wrong type are skipped (the schema reports them)."""
    found: list[CelSource] = []
    if kind == "ResourceClassParameters":
        for i, entry in enumerate(_list(doc.get("filters"))):
            for model, body in _model_entries(_mapping(entry)):
                if isinstance(body.get("selector"), str):
                    found.append(CelSource(f"filters[{i}].{model}.selector",
                                           body["selector"], "selector"))
    elif kind == "ResourceClaimParameters":
        for i, entry in enumerate(_list(doc.get("requests"))):
            for model, body in _model_entries(_mapping(entry)):
                for j, req in enumerate(_list(body.get("required"))):
                    if isinstance(req, dict) and isinstance(req.get("selector"), str):
                        found.append(CelSource(f"requests[{i}].{model}.required[{j}].selector",
                                               req["selector"], "selector"))
    elif kind == "ResourceClass":
        for i, entry in enumerate(_list(doc.get("numericParameters"))):
            if isinstance(entry, dict) and isinstance(entry.get("celTemplate"), str):
                found.append(CelSource(f"numericParameters[{i}].celTemplate",
                                       entry["celTemplate"], "template"))
    elif kind == "DeviceClass":
        found += _device_selectors(_mapping(doc.get("spec")).get("selectors"), "spec.selectors")
    elif kind == "DriverSimulation":
        spec = _mapping(doc.get("spec"))
        if isinstance(spec.get("requestCount"), str):
            found.append(CelSource("spec.requestCount", spec["requestCount"], "expression"))
    elif kind == "ResourceClaim":
        found += _claim_selectors(_mapping(doc.get("spec")), "spec")
    elif kind == "ResourceClaimTemplate":
        found += _claim_selectors(_mapping(_mapping(doc.get("spec")).get("spec")), "spec.spec")
    return found


def _device_selectors(selectors, path: str) -> list[CelSource]:
    found = []
    for i, entry in enumerate(_list(selectors)):
        cel = _mapping(_mapping(entry).get("cel"))
        if isinstance(cel.get("expression"), str):
            found.append(CelSource(f"{path}[{i}].cel.expression", cel["expression"],
                                   "device selector"))
    return found


def _claim_selectors(spec: dict, path: str) -> list[CelSource]:
    """The selectors of a resource.k8s.io/v1 claim spec (a seed claim has none: its
    ``spec.devices`` is absent)."""
    found = []
    requests = _mapping(spec.get("devices")).get("requests")
    for i, request in enumerate(_list(requests)):
        request = _mapping(request)
        at = f"{path}.devices.requests[{i}]"
        found += _device_selectors(_mapping(request.get("exactly")).get("selectors"),
                                   f"{at}.exactly.selectors")
        for j, sub in enumerate(_list(request.get("firstAvailable"))):
            found += _device_selectors(_mapping(sub).get("selectors"),
                                       f"{at}.firstAvailable[{j}].selectors")
    return found
