"""Selector helpers shared by the models: compile, test and explain a set of selectors."""

from __future__ import annotations

from collections.abc import Iterable

from allocation.engine.attributes import AttributeSet
from allocation.engine.cel import Selector, compile_selector

__all__ = ["compile_selectors", "selectors_pass", "refusal_for"]


def compile_selectors(sources: Iterable[str]) -> tuple[Selector, ...]:
    """Compiled selectors (each source compiled once per process)."""
    return tuple(compile_selector(s) for s in sources)


def selectors_pass(selectors: tuple[Selector, ...], attributes: AttributeSet) -> bool:
    """Whether every selector is true for ``attributes`` (an error counts as false)."""
    return all(selector.evaluate(attributes).matched for selector in selectors)


def refusal_for(selectors: tuple[Selector, ...], attributes: AttributeSet) -> str:
    """Which selector refused ``attributes`` and how: false, or the runtime error."""
    for index, selector in enumerate(selectors):
        outcome = selector.evaluate(attributes)
        if outcome.matched:
            continue
        which = "request selector" if index == 0 else "class filter"
        if outcome.error:
            return f"{which} `{selector.source}` failed: {outcome.error}"
        return f"{which} `{selector.source}` is false"
    return "no selector refused it"
