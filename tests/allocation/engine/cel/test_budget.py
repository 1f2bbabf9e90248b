"""The runtime budget: an input larger than the declared bounds is estimated again before it
is evaluated, and over the limits it is not evaluated."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from allocation.engine.attributes import Attribute, AttributeSet
from allocation.engine.cel import (
    CelEvaluationError,
    SelectorOutcome,
    compile_expression,
    compile_selector,
)
from allocation.engine.cel.budget import Budget, measure
from allocation.engine.cel.cost import InputBounds

ROOT = Path(__file__).resolve().parents[4]


def test_measure_finds_the_largest_string_list_and_map() -> None:
    bounds = measure([{"a": ["xyz", "w" * 9], "bb": {"k": 1}}, "q", [1, 2, 3]])
    assert bounds == InputBounds(string=9, list=3, map=2)


def _big_device(characters: int) -> AttributeSet:
    return AttributeSet([Attribute("big", "string", "x" * characters),
                         Attribute("tags", "stringSlice", ("a",) * 3)])


_BLOWS_UP = ('[strings.big].map(a, a+a+a+a+a+a+a+a).map(b, b+b+b+b+b+b+b+b)'
             '.map(c, c+c+c+c+c+c+c+c).all(z, size(z) > 0)')


def test_a_selector_over_budget_for_its_input_is_not_evaluated() -> None:
    selector = compile_selector(_BLOWS_UP)  # 256 declared characters: within the limits
    assert selector.evaluate(_big_device(200)) == SelectorOutcome(True)
    outcome = selector.evaluate(_big_device(2**20))
    assert not outcome.matched
    assert outcome.error == (
        "CEL evaluation over budget, not evaluated: for this input (strings up to 1,048,576 "
        "characters) estimated cost 267,911,289 exceeds the budget of 1,000,000")


def test_a_cheap_selector_is_never_estimated_again() -> None:
    budget = Budget('strings.big == "x"')
    assert budget.check([{"big": "x" * 10**6}]) is None
    assert Budget('strings.big.startsWith("x")').check([{"big": "x" * 10**6}]) is None


def test_an_expression_over_budget_for_its_input_fails_to_evaluate() -> None:
    expression = compile_expression("object.items.map(i, i + i + i + i).size()",
                                    {"object": "dyn"})
    assert expression.evaluate(object={"items": ["ab", "cd"]}) == 2
    with pytest.raises(CelEvaluationError, match="over budget, not evaluated: for this input"):
        expression.evaluate(object={"items": ["x" * 5000] * 5000})


def test_the_runtime_budget_keeps_memory_bounded() -> None:
    """Under a 384 MiB address-space limit the guarded selector answers; the same program run
    without the budget dies for want of memory (so the input really is a bomb)."""
    script = textwrap.dedent(f"""
        import resource, sys
        from allocation.engine.attributes import Attribute, AttributeSet
        from allocation.engine.cel import compile_selector
        from allocation.engine.cel._library import compile_program
        limit = 384 * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        source = {_BLOWS_UP!r}
        device = AttributeSet([Attribute("big", "string", "x" * 2**20)])
        if sys.argv[1] == "guarded":
            print(compile_selector(source).evaluate(device).error)
        else:
            print(compile_program(source).run(device.cel_activation()))
    """)
    runs = {mode: subprocess.run([sys.executable, "-c", script, mode], cwd=ROOT, timeout=120,
                                 capture_output=True, text=True) for mode in ("guarded", "raw")}
    assert runs["guarded"].returncode == 0, runs["guarded"].stderr
    assert runs["guarded"].stdout.startswith("CEL evaluation over budget, not evaluated")
    assert runs["raw"].stdout.strip() == "(False, 'evaluation ran out of memory')"
