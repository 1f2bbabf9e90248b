"""A schema node whose ``valid`` verdict is remembered per value: the parts of a document
that a cluster repeats whole, thousands of times (docs/architecture.md, "Speed").

Eight thousand pods of one workload share their containers and status and, when written
from one template, their whole spec; only the names differ. ``Remembered`` checks each
distinct value once. The key is the value's ``marshal`` bytes, which tell every value of a
document apart, the JSON types included (``1``, ``1.0``, ``True`` and ``"1"``; a list and
a tuple; ``None`` and NaN): marshal writes each built-in type with its own code and reads
the bytes back to an equal value, so equal bytes mean equal values and a remembered verdict
is the one ``inner`` gives that value; ``valid`` is a function of the value alone
(schema.py). It costs about a third of ``repr`` on a pod's spec. A value marshal refuses
(a subclass of a built-in type, an object of any other class) is keyed by its ``repr``
instead, which a bytes key never equals. ``check`` (the problems of an invalid document) is
always ``inner``'s own, so every message is unchanged.
"""

from __future__ import annotations

import marshal
from typing import Any

from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.schema import Schema

__all__ = ["Remembered", "VERDICTS_KEPT"]

VERDICTS_KEPT = 4096
"""Distinct values remembered per node; later ones are checked every time (a cluster of
distinct pods costs one key per value more, and no memory beyond this)."""


class Remembered(Schema):
    """``inner``, with the ``valid`` verdict of each distinct value remembered."""

    def __init__(self, inner: Schema) -> None:
        self.inner = inner
        self._verdicts: dict[bytes | str, bool] = {}

    def check(self, value: Any, path: str, problems: ProblemList) -> None:
        self.inner.check(value, path, problems)

    def valid(self, value: Any) -> bool:
        try:
            # version 2: no back-references, so equal values written from distinct objects
            # (8,000 pods read apart) give the same bytes
            key: bytes | str = marshal.dumps(value, 2)
        except ValueError:  # marshal writes built-in types only
            key = repr(value)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self.inner.valid(value)
            if len(self._verdicts) < VERDICTS_KEPT:
                self._verdicts[key] = verdict
        return verdict
