"""What-if scenarios: a baseline's documents plus changes, simulated and compared.

See :mod:`allocation.engine.scenarios.changes` for the change operations,
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
from allocation.engine.scenarios.outcome import Diff, Outcome, diff, summarize

__all__ = ["OPS", "Applied", "ChangeError", "apply_changes", "check_change", "pinned_node",
           "Evaluation", "evaluate", "refusal", "Diff", "Outcome", "diff", "summarize"]
