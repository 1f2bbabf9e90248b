"""The CEL parser behind the cost estimate."""

from __future__ import annotations

import pytest

from allocation.engine.cel import CelCostError
from allocation.engine.cel._parser import Node, ParseError, parse
from allocation.engine.cel.cost import estimate


def test_operators_calls_and_literals() -> None:
    tree = parse('strings.model.startsWith("A1") && ints["cores"] + 1 >= 2 || !bools.mig')
    assert tree.kind == "call" and tree.name == "_||_"
    left, right = tree.args
    assert left.name == "_&&_"
    starts = left.args[0]
    assert starts == Node("call", "startsWith", (
        Node("select", "model", (Node("ident", "strings"),)), Node("literal", "string", size=2)),
        member=True)
    assert left.args[1].name == "_>=_" and left.args[1].args[0].name == "_+_"
    assert right == Node("unary", "!_", (Node("select", "mig", (Node("ident", "bools"),)),),
                         size=1)


def test_macros_has_and_literals() -> None:
    tree = parse('[1, 2].map(x, x > 1, x * 2)')
    assert tree.kind == "macro" and tree.name == "map" and tree.var == "x"
    assert [arg.kind for arg in tree.args] == ["list", "call", "call"]
    assert parse("has(attributes.model)") == Node("has", "model", (Node("ident", "attributes"),))
    assert parse('{"a": 1,}').kind == "map"
    assert parse("google.protobuf.Int64Value{value: 1}").name == "google.protobuf.Int64Value"
    assert parse('b"\\xff\\xfe"') == Node("literal", "bytes", size=8)  # escapes only shrink
    assert parse('r"""a\\d"""') == Node("literal", "string", size=3)
    assert parse(".5 < 1.0").args[0] == Node("literal", "scalar", size=1)
    assert parse("true ? [1] : []").name == "_?_:_"


def test_long_chains_stay_shallow() -> None:
    tree = parse(" && ".join(["true"] * 2000))
    assert len(tree.args) == 2000
    assert parse("!" * 1000 + "true").size == 1000
    assert estimate(" || ".join(['attributes["memory"] >= "1Gi"'] * 300)).cost == 900


@pytest.mark.parametrize("source", ["1 +", "(1", "a.(b)", "[1 2]"])
def test_text_it_cannot_read_is_an_error(source: str) -> None:
    with pytest.raises(ParseError):
        parse(source)
    with pytest.raises(CelCostError, match="cannot be analysed for its cost"):
        estimate(source)


def test_optional_syntax_costs_as_the_plain_form() -> None:
    assert parse('m.?a') == parse("m.a")
    assert parse('m[?"a"]') == parse('m["a"]')
    assert parse('[?optional.of(1), 2]') == parse("[optional.of(1), 2]")
    assert parse('{?"k": optional.none()}') == parse('{"k": optional.none()}')
    assert parse('T{?f: optional.none()}') == parse("T{f: optional.none()}")
