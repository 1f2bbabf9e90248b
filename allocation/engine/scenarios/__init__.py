"""What-if scenarios: a baseline's documents plus changes, simulated and compared.

See :mod:`allocation.engine.scenarios.operations` for the change operations,
:mod:`~allocation.engine.scenarios.changes` for applying them,
:mod:`~allocation.engine.scenarios.fork` for the fork of the settled baseline,
:mod:`~allocation.engine.scenarios.evaluate` for evaluation and
:mod:`~allocation.engine.scenarios.outcome` for the comparison with the baseline.
"""

from __future__ import annotations

from allocation.engine.scenarios.changes import (
    OPS,
    Applied,
    ChangeError,
    apply_changes,
    check_change,
    pinned_node,
)
from allocation.engine.scenarios.evaluate import Evaluation, evaluate, refusal
from allocation.engine.scenarios.operations import Operation, read
from allocation.engine.scenarios.outcome import Diff, Outcome, diff, summarize

__all__ = ["OPS", "Applied", "ChangeError", "apply_changes", "check_change", "pinned_node",
           "Evaluation", "evaluate", "refusal", "Operation", "read", "Diff", "Outcome", "diff",
           "summarize"]
