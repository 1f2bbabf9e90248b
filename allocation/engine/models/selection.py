"""Selector helpers shared by the models: compile, test and explain a set of selectors."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from allocation.engine.attributes import AttributeSet
from allocation.engine.cel import Selector, compile_selector
from allocation.engine.models.base import Request

__all__ = ["compile_selectors", "selectors_pass", "refusal_for", "required_requests"]


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


def required_requests(model, driver_name: str, value: Any, filters: Sequence[Any],
                      label: str, named: bool = False) -> list[Request]:
    """One request per ``required`` entry of a selector-based request, with class filters.

    ``named``: entries carry a ``name`` that the label shows (partitionable requests).
    """
    filter_sources = [f["selector"] for f in filters]
    requests = []
    for index, required in enumerate(value.get("required") or ()):
        sources = (required["selector"], *filter_sources)
        suffix = f" ({required['name']})" if named else ""
        requests.append(Request(
            driver_name=driver_name, model=model, selectors=compile_selectors(sources),
            label=f"{label}.required[{index}]{suffix}", key=(driver_name, model.name, sources),
            sources=sources,
        ))
    return requests
