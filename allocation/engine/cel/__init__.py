"""CEL for DRA Planner: device selectors and general expressions.

The CEL library itself is used only by ``_library``; everything here is the project's own API.
"""

from __future__ import annotations

from allocation.engine.cel._errors import (
    CelCompileError,
    CelCostError,
    CelEvaluationError,
    compile_problem,
)
from allocation.engine.cel.cost import MAX_COST, MAX_VALUE_SIZE
from allocation.engine.cel.device import DeviceSelector, compile_device_selector
from allocation.engine.cel.expressions import Expression, compile_expression
from allocation.engine.cel.selectors import (
    MAX_EXPRESSION_LENGTH,
    Selector,
    SelectorOutcome,
    SelectorStats,
    compile_selector,
    reset_stats,
    stats,
    validate_selector,
)

__all__ = [
    "MAX_EXPRESSION_LENGTH",
    "MAX_COST",
    "MAX_VALUE_SIZE",
    "CelCompileError",
    "CelCostError",
    "CelEvaluationError",
    "DeviceSelector",
    "Expression",
    "Selector",
    "SelectorOutcome",
    "SelectorStats",
    "compile_device_selector",
    "compile_expression",
    "compile_problem",
    "compile_selector",
    "reset_stats",
    "stats",
    "validate_selector",
]
