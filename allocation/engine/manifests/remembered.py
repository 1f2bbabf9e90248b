"""A schema node whose ``valid`` verdict is remembered per value: the parts of a document
that a cluster repeats whole, thousands of times (docs/architecture.md, "Speed").

Eight thousand pods of one workload share their containers and status and, when written
from one template, their whole spec; only the names differ. ``Remembered`` checks each
distinct value once. The key is the value's ``repr``, which tells every value of a
document apart, the JSON types included (``1``, ``1.0``, ``True`` and ``"1"``; a list and
a tuple), so a remembered verdict is the one ``inner`` gives that value; ``valid`` is a
function of the value alone (schema.py). ``check`` (the problems of an invalid document)
is always ``inner``'s own, so every message is unchanged.
"""

from __future__ import annotations

from typing import Any

from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.schema import Schema

__all__ = ["Remembered", "VERDICTS_KEPT"]

VERDICTS_KEPT = 4096
"""Distinct values remembered per node; later ones are checked every time (a cluster of
distinct pods costs one ``repr`` per value more, and no memory beyond this)."""


class Remembered(Schema):
    """``inner``, with the ``valid`` verdict of each distinct value remembered."""

    def __init__(self, inner: Schema) -> None:
        self.inner = inner
        self._verdicts: dict[str, bool] = {}

    def check(self, value: Any, path: str, problems: ProblemList) -> None:
        self.inner.check(value, path, problems)

    def valid(self, value: Any) -> bool:
        key = repr(value)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self.inner.valid(value)
            if len(self._verdicts) < VERDICTS_KEPT:
                self._verdicts[key] = verdict
        return verdict
