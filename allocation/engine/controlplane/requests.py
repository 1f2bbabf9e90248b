"""What one claim asks of a simulated driver: its vendor parameters, ``requestCount`` and the
``handleData`` its allocation carries.

``requestCount`` is CEL over ``object`` (the claim's vendor parameters, null without a
``parametersRef``) and must give a non-negative integer; without it a claim takes one
resource. ``handleData`` is text in which each ``{{ expression }}`` is CEL over ``object``,
``claim`` (``{name, namespace}``), ``pool``, ``count`` and ``node`` (the selected node, empty
for Immediate allocation); strings are inserted as they are, other values as JSON.
Every failure is a message naming the DriverSimulation and the field; nothing here raises.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from allocation.engine.cel import (
    CelCompileError,
    CelEvaluationError,
    Expression,
    compile_expression,
)
from allocation.engine.constants import HANDLE_DATA_MAX
from allocation.engine.objects import DriverSimulation, ResourceClaim
from allocation.engine.parameters import claim_parameters, vendor_snapshot
from allocation.engine.templates import HANDLE_VARIABLES, OBJECT_VARIABLES, PLACEHOLDER, json_text

if TYPE_CHECKING:
    from allocation.engine.state import ClusterState

__all__ = ["vendor_parameters", "request_count", "render_handle_data"]



@lru_cache(maxsize=1024)
def _compiled(source: str, variables: tuple[tuple[str, str], ...]) -> Expression:
    return compile_expression(source, dict(variables))


def vendor_parameters(state: ClusterState, claim: ResourceClaim) -> tuple[Any, str | None]:
    """The claim's vendor parameters (the referenced object as written), or why not found.

    A driver reads the object the claim names, never one generated from it
    (``allocation/engine/parameters.py``).
    """
    found, reason = claim_parameters(state, claim, generated=False)
    return vendor_snapshot(found), reason


def request_count(sim: DriverSimulation, params: Any) -> tuple[int, str | None]:
    """How many resources one claim with ``params`` takes, or the failure message."""
    source = sim.request_count
    if not source:
        return 1, None
    where = f"DriverSimulation {sim.name}: spec.requestCount"
    try:
        value = _compiled(source, tuple(OBJECT_VARIABLES.items())).evaluate(object=params)
    except CelCompileError as exc:
        return 0, f"{where}: invalid CEL expression: {exc}"
    except CelEvaluationError as exc:
        return 0, f"{where} {source!r} failed: {exc}"
    if isinstance(value, bool) or not isinstance(value, int):
        return 0, (f"{where} {source!r} must give an integer, "
                   f"got {type(value).__name__} {value!r}")
    if value < 0:
        return 0, f"{where} {source!r} must not be negative, got {value}"
    return value, None


def _text(value: Any) -> str:
    """A placeholder's value in handle data: a string as it is, else its JSON text.

    Raises:
        ValueError: as ``templates.json_text``.
    """
    if isinstance(value, str):
        return value
    return "" if value is None else json_text(value)


def render_handle_data(sim: DriverSimulation, variables: dict[str, Any]
                       ) -> tuple[str | None, str | None]:
    """``spec.handleData`` rendered for one allocation (None without a template), or why not."""
    template = sim.handle_data
    if template is None:
        return None, None
    where = f"DriverSimulation {sim.name}: spec.handleData"
    out: list[str] = []
    last = 0
    for match in PLACEHOLDER.finditer(template):
        source = match.group(1).strip()
        try:
            value = _compiled(source, tuple(sorted(HANDLE_VARIABLES.items()))).evaluate(
                **variables)
        except CelCompileError as exc:
            return None, f"{where}: placeholder {{{{{source}}}}} is not valid CEL: {exc}"
        except CelEvaluationError as exc:
            return None, f"{where}: placeholder {{{{{source}}}}} failed: {exc}"
        try:
            text = _text(value)
        except ValueError as exc:
            return None, f"{where}: placeholder {{{{{source}}}}} gave no JSON value: {exc}"
        out.append(template[last:match.start()])
        out.append(text)
        last = match.end()
    out.append(template[last:])
    data = "".join(out)
    size = len(data.encode("utf-8"))
    if size > HANDLE_DATA_MAX:
        return None, (f"{where} renders to {size} bytes; resourceHandles[].data holds at most "
                      f"{HANDLE_DATA_MAX} (16 KiB)")
    return data, None
