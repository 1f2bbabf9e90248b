"""``cel.syntax``: source to tree and back, with the meaning kept."""

from __future__ import annotations

import pytest

from allocation.engine.cel.syntax import (
    ParseError,
    literal_value,
    parse,
    string_literal,
    unparse,
)


@pytest.mark.parametrize("source", [
    'attributes["m"] >= "1Gi" && attributes.x == 1',
    "!(a || b) && -x.y(1, 2) > 3 ? [1, 2].all(i, i > 0) : {\"a\": 1}[\"a\"] == 1",
    "(a + b) * c - d",
    "a - (b - c)",
    "has(a.b) && \"x\" in m",
    "(a ? b : c) ? d : e",
    "r'raw' + b\"bytes\" == 'single'",
    "!!true || -(-1) < 2u",
])
def test_unparse_writes_back_the_same_expression(source):
    assert unparse(parse(source)) == source


def test_parentheses_follow_precedence():
    assert unparse(parse("((a && b)) || (c)")) == "a && b || c"
    assert unparse(parse("(a || b) && c")) == "(a || b) && c"
    assert unparse(parse("(1 + 2).string()")) == "(1 + 2).string()"


@pytest.mark.parametrize("source", ["m.?x", "m[?\"k\"]", "{?\"k\": v}", "T{f: 1}"])
def test_what_the_tree_cannot_keep_is_refused(source):
    with pytest.raises(ParseError):
        parse(source)


def test_literals():
    assert string_literal('a"b\\c') == '"a\\"b\\\\c"'
    assert literal_value(parse('"x"')) == "x"
    assert literal_value(parse("'y'")) == "y"
    assert literal_value(parse('"a\\n"')) is None  # escapes: not read here
    assert literal_value(parse("1")) is None
