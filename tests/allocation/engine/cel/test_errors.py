"""CEL compile errors in words: the parser's token lists become what went wrong, with the
position (``allocation/engine/cel/_errors.py``)."""

from __future__ import annotations

import pytest

from allocation.engine.cel import CelCompileError, compile_problem, compile_selector
from allocation.engine.cel._errors import in_words


@pytest.mark.parametrize(("source", "said"), [
    ('device.driver == "a" && && true', "line 1, column 25: unexpected '&&'"),
    ("a &&", "line 1, column 5: the expression ends too early"),
    ("x == (1", "line 1, column 8: missing ')' before the end of the expression"),
    ("foo bar", "line 1, column 5: unexpected 'bar'"),
    ("a # b", "line 1, column 3: unexpected character '#'"),
])
def test_syntax_errors_are_said_in_words_with_the_position(source: str, said: str) -> None:
    with pytest.raises(CelCompileError) as caught:
        compile_selector(source)
    assert str(caught.value) == said
    assert "expecting" not in str(caught.value) and "{" not in str(caught.value)
    assert compile_problem(caught.value, "selector") == f"invalid CEL selector: {said}"


def test_messages_that_are_not_syntax_errors_are_left_alone() -> None:
    assert in_words("undeclared reference to 'x'") == "undeclared reference to 'x'"
    assert in_words("Syntax error: something new") == "syntax error: something new"
    assert in_words("Syntax error: no viable alternative at input 'a b'") == "cannot read 'a b'"
