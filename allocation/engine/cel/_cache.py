"""The caches shared by every kind of selector: compiled sources, and results per selector.

A selector's result depends only on the values it reads, so each selector keeps its results
keyed on those values (``docs/cel.md``, "Result cache"); the key must carry each value's type
(``True == 1`` in Python). Both caches are bounded and simply cleared when full.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from threading import Lock
from typing import Generic, TypeVar

__all__ = ["CACHE_SIZE", "COMPILED_LIMIT", "SelectorStats", "STATS", "ResultCache",
           "CompiledCache"]

#: Results kept per selector.
CACHE_SIZE = 4096
#: Compiled selectors kept per kind of selector.
COMPILED_LIMIT = 4096

_V = TypeVar("_V")


@dataclass(slots=True)
class SelectorStats:
    """Counters over all selectors: ``lookups`` (calls) and ``evaluations`` (cache misses)."""

    evaluations: int = 0
    lookups: int = 0


#: The counters of every selector (seed and v1).
STATS = SelectorStats()


class ResultCache(Generic[_V]):
    """The results of one selector, keyed on the values it read."""

    __slots__ = ("_results",)

    def __init__(self) -> None:
        self._results: dict[Hashable, _V] = {}

    def get(self, key: Hashable, compute: Callable[[], _V]) -> _V:
        """The result for ``key``, computed (and counted as an evaluation) when not cached."""
        STATS.lookups += 1
        result = self._results.get(key)
        if result is None:
            STATS.evaluations += 1
            result = compute()
            if len(self._results) >= CACHE_SIZE:
                self._results.clear()
            self._results[key] = result
        return result


class CompiledCache(Generic[_V]):
    """Compiled selectors by key (source text and environment), built once each."""

    __slots__ = ("_compiled", "_lock")

    def __init__(self) -> None:
        self._compiled: dict[Hashable, _V] = {}
        self._lock = Lock()

    def get(self, key: Hashable, build: Callable[[], _V]) -> _V:
        """The compiled selector for ``key``; ``build`` raises for a source that cannot be."""
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = build()
            with self._lock:
                if len(self._compiled) >= COMPILED_LIMIT:
                    self._compiled.clear()
                self._compiled[key] = compiled
        return compiled
