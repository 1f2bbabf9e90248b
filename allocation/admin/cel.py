"""Where a document holds CEL, and compiling it with the engine's CEL layer.

Selectors (class filters, claim requests) compile as selectors; a DeviceClass's
``spec.selectors[].cel.expression`` as a v1 device selector
(``allocation.engine.cel.device.compile_device_selector``, under the default profile's
DRAConsumableCapacity gate, as the loader compiles it); a DriverSimulation's
``spec.requestCount`` as an expression over ``object``; each ``{{ expression }}`` of a
numeric class's ``celTemplate`` as an expression over ``object``. Errors carry their
position (line:column inside the expression; the template's own line for templates).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from allocation.engine.cel import CelCompileError, compile_expression, compile_selector
from allocation.engine.cel.device import compile_device_selector
from allocation.services.profile import console_profile

__all__ = ["CelSource", "cel_sources", "compile_errors", "TEMPLATE_EXPRESSION"]

TEMPLATE_EXPRESSION = re.compile(r"\{\{(.*?)\}\}", re.S)


@dataclass(frozen=True)
class CelSource:
    """One CEL text in a document: its field path, text and what it must compile as."""

    path: str
    source: str
    kind: str  # "selector", "device selector", "expression" or "template"


def _model_entries(entry: dict):
    return [(k, v) for k, v in entry.items() if k != "driverName" and isinstance(v, dict)]


def cel_sources(kind: str, doc: dict) -> list[CelSource]:
    """Every CEL text of a document of ``kind``, in document order."""
    found: list[CelSource] = []
    if kind == "ResourceClassParameters":
        for i, entry in enumerate(doc.get("filters") or ()):
            for model, body in _model_entries(entry if isinstance(entry, dict) else {}):
                if isinstance(body.get("selector"), str):
                    found.append(CelSource(f"filters[{i}].{model}.selector",
                                           body["selector"], "selector"))
    elif kind == "ResourceClaimParameters":
        for i, entry in enumerate(doc.get("requests") or ()):
            for model, body in _model_entries(entry if isinstance(entry, dict) else {}):
                for j, req in enumerate(body.get("required") or ()):
                    if isinstance(req, dict) and isinstance(req.get("selector"), str):
                        found.append(CelSource(f"requests[{i}].{model}.required[{j}].selector",
                                               req["selector"], "selector"))
    elif kind == "ResourceClass":
        for i, entry in enumerate(doc.get("numericParameters") or ()):
            if isinstance(entry, dict) and isinstance(entry.get("celTemplate"), str):
                found.append(CelSource(f"numericParameters[{i}].celTemplate",
                                       entry["celTemplate"], "template"))
    elif kind == "DeviceClass":
        spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
        for i, entry in enumerate(spec.get("selectors") or ()):
            cel = entry.get("cel") if isinstance(entry, dict) else None
            if isinstance(cel, dict) and isinstance(cel.get("expression"), str):
                found.append(CelSource(f"spec.selectors[{i}].cel.expression",
                                       cel["expression"], "device selector"))
    elif kind == "DriverSimulation":
        spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
        if isinstance(spec.get("requestCount"), str):
            found.append(CelSource("spec.requestCount", spec["requestCount"], "expression"))
    return found


def _where(exc: CelCompileError) -> str:
    if exc.line is not None and exc.column is not None:
        return f"line {exc.line}, column {exc.column}: "
    return ""


def compile_errors(item: CelSource) -> list[str]:
    """Compile one CEL text; its errors, each with the position."""
    try:
        if item.kind == "selector":
            compile_selector(item.source)
        elif item.kind == "device selector":
            compile_device_selector(item.source,
                                    consumable_capacity=console_profile().consumable_capacity)
        elif item.kind == "expression":
            compile_expression(item.source, {"object": "dyn"})
        else:
            return _template_errors(item.source)
    except CelCompileError as exc:
        return [f"{_where(exc)}{exc.message}"]
    return []


def _template_errors(template: str) -> list[str]:
    errors = []
    for number, match in enumerate(TEMPLATE_EXPRESSION.finditer(template), start=1):
        line = template.count("\n", 0, match.start()) + 1
        try:
            compile_expression(match.group(1).strip(), {"object": "dyn"})
        except CelCompileError as exc:
            errors.append(f"template line {line}, expression {number} "
                          f"({{{{{match.group(1).strip()}}}}}): {_where(exc)}{exc.message}")
    return errors
