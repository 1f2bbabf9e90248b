"""Compiling the CEL texts of a document (found by
:func:`allocation.engine.manifests.cel_sources.cel_sources`) with the engine's CEL layer.

Selectors (class filters, claim requests) compile as selectors; a DeviceClass's
``spec.selectors[].cel.expression`` as a v1 device selector
(``allocation.engine.cel.device.compile_device_selector``, under the default profile's
DRAConsumableCapacity gate, as the loader compiles it); a DriverSimulation's
``spec.requestCount`` as an expression over ``object``; each ``{{ expression }}`` of a
numeric class's ``celTemplate`` as an expression over ``object``. Errors carry their
position (line:column inside the expression; the template's own line for templates).
"""

from __future__ import annotations

from allocation.engine.cel import CelCompileError, compile_expression, compile_selector
from allocation.engine.cel.device import compile_device_selector
from allocation.engine.manifests.cel_sources import TEMPLATE_EXPRESSION, CelSource, cel_sources
from allocation.services.profile import console_profile

__all__ = ["CelSource", "cel_sources", "compile_errors"]


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
            compile_device_selector(item.source, **console_profile().selector_options)
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
