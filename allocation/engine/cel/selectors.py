"""Device selectors: boolean CEL expressions over one device's attributes, with a result cache."""

from __future__ import annotations

from dataclasses import dataclass

from allocation.engine.attributes import AttributeSet
from allocation.engine.cel._analysis import attribute_reads
from allocation.engine.cel._cache import (
    CACHE_SIZE,
    STATS,
    CompiledCache,
    ResultCache,
    SelectorStats,
)
from allocation.engine.cel._errors import CelCompileError
from allocation.engine.cel._library import Program, compile_program
from allocation.engine.cel.budget import Budget

__all__ = [
    "MAX_EXPRESSION_LENGTH",
    "CACHE_SIZE",
    "SelectorOutcome",
    "Selector",
    "SelectorStats",
    "compile_selector",
    "validate_selector",
    "check_source",
    "stats",
    "reset_stats",
]

MAX_EXPRESSION_LENGTH = 10 * 1024


@dataclass(frozen=True, slots=True)
class SelectorOutcome:
    """Whether a device matched; ``error`` (set only when not matched) says why it could not."""

    matched: bool
    error: str | None = None


_COMPILED: CompiledCache[Selector] = CompiledCache()


class Selector:
    """A compiled selector; ``reads`` is the attribute names it reads (None: possibly any)."""

    __slots__ = ("source", "reads", "_program", "_budget", "_sorted_reads", "_cache")

    def __init__(self, source: str, program: Program, reads: frozenset[str] | None,
                 budget: Budget) -> None:
        self.source = source
        self.reads = reads
        self._program = program
        self._budget = budget
        self._sorted_reads = None if reads is None else tuple(sorted(reads))
        self._cache: ResultCache[SelectorOutcome] = ResultCache()

    def evaluate(self, attributes: AttributeSet) -> SelectorOutcome:
        """Whether ``attributes`` match; a run-time error is a non-match carrying its message."""
        reads = self._sorted_reads
        key = attributes if reads is None else attributes.read_key(reads)
        return self._cache.get(key, lambda: self._run(attributes))

    def _run(self, attributes: AttributeSet) -> SelectorOutcome:
        activation = attributes.cel_activation()
        if not self._budget.fixed:
            # "attributes" holds every value; with known reads only those can be reached.
            every = activation["attributes"]
            over = self._budget.check((every,) if self._sorted_reads is None else
                                      [every.get(name) for name in self._sorted_reads])
            if over is not None:
                return SelectorOutcome(False, over)
        ok, value = self._program.run(activation)
        if not ok:
            return SelectorOutcome(False, str(value))
        if not isinstance(value, bool):
            return SelectorOutcome(False, f"selector gave {type(value).__name__}, not bool")
        return SelectorOutcome(value)

    def __repr__(self) -> str:
        return f"Selector({self.source!r})"


def check_source(source: str) -> None:
    """Raise CelCompileError when ``source`` is too long to compile."""
    size = len(source.encode("utf-8"))
    if size > MAX_EXPRESSION_LENGTH:
        raise CelCompileError(f"expression is {size} bytes, longer than the "
                              f"{MAX_EXPRESSION_LENGTH}-byte limit")


def compile_selector(source: str) -> Selector:
    """The selector for ``source``, compiled once per distinct source.

    Raises:
        CelCompileError: it is too long, does not parse or type-check, or cannot give a bool;
            CelCostError (a CelCompileError) when its estimated cost is over the limits.
    """
    return _COMPILED.get(source, lambda: _build(source))


def _build(source: str) -> Selector:
    check_source(source)
    program = compile_program(source)
    if program.result_type not in ("bool", "dyn"):
        raise CelCompileError(f"a selector must evaluate to bool, not {program.result_type}")
    return Selector(source, program, attribute_reads(source), Budget(source))


def validate_selector(source: str) -> list[str]:
    """Problems with ``source`` as a selector, one message each (empty when it is usable)."""
    try:
        compile_selector(source)
    except CelCompileError as error:
        return [str(error)]
    return []


def stats() -> SelectorStats:
    """A snapshot of the selector counters."""
    return SelectorStats(STATS.evaluations, STATS.lookups)


def reset_stats() -> None:
    """Set the selector counters to zero."""
    STATS.evaluations = 0
    STATS.lookups = 0
