"""Kubernetes' lists library in resource.k8s.io/v1 device selectors
(allocation/engine/cel/_lists.py, declared by _library.py).

The cases of upstream's own tests (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel
validation_test.go "extended list library" at v0.36.2, with its lists of the object written
as literals) and the others here were checked against upstream's DRA cel package
(k8s.io/dynamic-resource-allocation cel, k8s.io/apiserver pkg/cel/library lists.go v0.36.2)
with /work/harness/celhar; docs/cel.md ("Lists") records the comparison.
"""

from __future__ import annotations

import pytest

from allocation.engine.cel import CelCostError
from allocation.engine.cel._library import compile_device_program
from allocation.engine.cel._lists import cel_equal, list_sum
from tests.allocation.engine.cel.device_helpers import (
    DRIVER,
    compile_error,
    matches,
    runtime_error,
    value,
)

INTS, DOUBLES = "[1, 2, 2, 3]", "[1.0, 2.0, 2.0, 3.0]"
DURATIONS = "[duration('1s'), duration('1m'), duration('1m'), duration('1h')]"
STRINGS = "['a', 'b', 'b', 'c']"
DATES = ("[timestamp('2000-01-01T00:00:00Z'), timestamp('2000-02-01T00:00:00Z'), "
         "timestamp('2000-02-01T00:00:00Z'), timestamp('2010-01-01T00:00:00Z')]")
OBJS = "[{'f1': 'a', 'f2': 'a'}, {'f1': 'a', 'f2': 'b'}, {'f1': 'a', 'f2': 'b'}]"


def run(expression: str) -> tuple[bool, object]:
    """(ok, value or cel-go's message) of an expression, past the selector's checks (lists
    of strings are over a selector's cost limit; see test_string_lists_are_over_the_limit)."""
    return compile_device_program(expression, True).run_bool({
        "device.driver": DRIVER, "device.attributes": {}, "device.capacity": {},
        "device.allowMultipleAllocations": False})


@pytest.mark.parametrize("expression", [
    # upstream's valid cases
    f"{INTS}.sum() == 8", f"{INTS}.min() == 1", f"{INTS}.max() == 3",
    f"{INTS}.filter(x, x > 5).sum() == 0", f"{INTS}.isSorted()",
    f"{INTS}.filter(x, x > 5).isSorted()", "[2, 1].isSorted() == false",
    f"{INTS}.indexOf(2) == 1", f"{INTS}.lastIndexOf(2) == 2", f"{INTS}.indexOf(10) == -1",
    f"{INTS}.lastIndexOf(10) == -1",
    f"{DOUBLES}.sum() == 8.0", f"{DOUBLES}.min() == 1.0", f"{DOUBLES}.max() == 3.0",
    f"{DOUBLES}.filter(x, x > 5.0).sum() == 0.0", f"{DOUBLES}.isSorted()",
    "[2.0, 1.0].isSorted() == false", f"{DOUBLES}.indexOf(2.0) == 1",
    f"{DOUBLES}.lastIndexOf(2.0) == 2", f"{DOUBLES}.indexOf(10.0) == -1",
    f"{DURATIONS}.sum() == duration('1h2m1s')", f"{DURATIONS}.min() == duration('1s')",
    f"{DURATIONS}.max() == duration('1h')",
    f"{DURATIONS}.filter(d, d > duration('2h')).sum() == duration('0')",
    f"{DURATIONS}.isSorted()", "[duration('1m'), duration('1s')].isSorted() == false",
    f"{DURATIONS}.indexOf(duration('1m')) == 1", f"{DURATIONS}.lastIndexOf(duration('1m')) == 2",
    f"{DURATIONS}.indexOf(duration('2m')) == -1",
    f"{DATES}.min() == timestamp('2000-01-01T00:00:00.000Z')",
    f"{DATES}.max() == timestamp('2010-01-01T00:00:00.000Z')", f"{DATES}.isSorted()",
    f"{DATES}.indexOf(timestamp('2000-02-01T00:00:00.000Z')) == 1",
    f"{DATES}.lastIndexOf(timestamp('2000-02-01T00:00:00.000Z')) == 2",
    f"{DATES}.indexOf(timestamp('2005-02-01T00:00:00.000Z')) == -1",
    "[[1], [2]].indexOf([1]) == 0", "[{'a': 1}, {'b': 2}].lastIndexOf({'b': 2}) == 1",
    "([0] + [1].filter(x, x > 5)).min() == 0",
    "dyn([]).sum() == 0", "dyn([1, 2]).sum() == 3", "dyn([1.0, 2.0]).sum() == 3.0",
    "[].sum() == 0", "[].isSorted()", "[].indexOf(1) == -1",
    # and more, each checked with celhar
    "[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3", "[1u, 2u].sum() == 3u",
    "[1.5, 2.25].sum() == 3.75", "[true, false].max() && ![true, false].min()",
    "[false, true].isSorted() && ![true, false].isSorted()",
    "[3, 1, 1].lastIndexOf(1) == 2",
    "lists.range(5).sum() == 10", "[1, 2, 3].map(x, x * 2).sum() == 12",
    "[3, 2, 1].sort().isSorted()", "[1, 2, 3].indexOf(2) == [1, 2, 3].lastIndexOf(2)",
    "[timestamp('2020-01-01T00:00:00Z'), timestamp('2019-01-01T00:00:00Z')].min() "
    "== timestamp('2019-01-01T00:00:00Z')",
    "[duration('1h'), duration('1m'), duration('1s')].sum() == duration('3661s')",
    "[-1, -2].max() == -1", "[1e308, 1e308].sum() > 1e308",
    "[1.0, 0.0/0.0].min() == 1.0",  # a failed comparison (NaN) is not "greater"
    "[0.0/0.0].indexOf(0.0/0.0) == -1", "[-0.0].indexOf(0.0) == 0",
    "[null].indexOf(null) == 0", "[{}].indexOf({}) == 0",
    "[semver('1.2.3'), semver('1.2.4')].indexOf(semver('1.2.4')) == 1",
    "[quantity('1'), quantity('1000m')].lastIndexOf(quantity('1')) == 1",
    "[ip('1.2.3.4')].indexOf(ip('1.2.3.4')) == 0",
    "'a b c'.split(' ').size() == 3 && 'abcb'.lastIndexOf('b') == 3",  # strings keep theirs
])
def test_upstream_values(expression: str) -> None:
    assert run(expression) == (True, True)


@pytest.mark.parametrize("expression", [
    f"{STRINGS}.min() == 'a'", f"{STRINGS}.max() == 'c'", f"{STRINGS}.isSorted()",
    "['b', 'a'].isSorted() == false", f"{STRINGS}.indexOf('b') == 1",
    f"{STRINGS}.lastIndexOf('b') == 2", f"{STRINGS}.indexOf('x') == -1",
    f"{OBJS}.indexOf({OBJS}[1]) == 1", f"{OBJS}.lastIndexOf({OBJS}[1]) == 2",
    "['b', 'a', 'ä', 'z'].max() == 'ä'",  # byte order of UTF-8, as Go's strings.Compare
    "[b'\\xff', b'a'].min() == b'a'",
])
def test_string_and_bytes_lists(expression: str) -> None:
    assert run(expression) == (True, True)


@pytest.mark.parametrize("expression", [
    f"{STRINGS}.min() == 'a'", "['a'].indexOf('a') == 0", "[b'a'].isSorted()",
    "device.attributes['d'].map(k, k).isSorted()",
])
def test_string_lists_are_over_the_limit(expression: str) -> None:
    # Kubernetes charges each string or bytes element its traversal, and its DRA size
    # estimator cannot size the element of a list literal or of a map's keys (no path):
    # the estimate is about 1.8e18 per element, so upstream's validation refuses these.
    error = compile_error(expression)
    assert isinstance(error, CelCostError)
    assert "exceeds the limit of 1,000,000" in error.message


@pytest.mark.parametrize(("expression", "message"), [
    # upstream's errors
    ("[1].filter(x, x > 5).min() == 1", "min called on empty list"),
    ("[1].filter(x, x > 5).max() == 3", "max called on empty list"),
    ("[1.0].filter(x, x > 5.0).min() == 1.0", "min called on empty list"),
    ("[].max() == 1", "max called on empty list"),
    # and more, each checked with celhar
    ("[9223372036854775807, 1].sum() == 0", "integer overflow"),
    ("[-9223372036854775807, -2].sum() == 0", "integer overflow"),
    ("[duration('1000000h'), duration('1000000h'), duration('1000000h')].sum() "
     "== duration('0s')", "integer overflow"),  # Go's time.Duration: int64 nanoseconds
    ("[null].sum() == duration('0s')", "no such overload: sum(list)"),
    ("[null].min() == duration('0s')", "no such overload: min(list)"),
    ("[null].isSorted()", "no such overload: isSorted(list)"),
    ("dyn(['a']).sum() == 0", "no such overload: sum(list)"),
    ("dyn([[1]]).min() == 0", "no such overload: min(list)"),
])
def test_upstream_errors(expression: str, message: str) -> None:
    assert run(expression) == (False, message)


def test_dyn_lists_follow_cel_go_value_semantics() -> None:
    # Attribute values are dyn, so a list of them type-checks whatever their types; cel-go
    # picks the overload from the first element and skips comparisons that fail.
    int_then_string = {"attributes": {"i": {"int": 0}, "s": {"string": "a100"},
                                      "b": {"bool": True}}}
    attrs = 'device.attributes["gpu.example.com"]'
    assert matches(f"[{attrs}.i, {attrs}.s].min() == 0", int_then_string)
    assert matches(f"[{attrs}.s, {attrs}.i].max() == 'a100'", int_then_string)
    assert matches(f"[{attrs}.i, {attrs}.s].isSorted()", int_then_string)
    assert matches(f"[{attrs}.i, {attrs}.s].indexOf('a100') == 1", int_then_string)
    assert matches(f"[{attrs}.i, {attrs}.s].lastIndexOf(0.0) == 0", int_then_string)
    assert matches(f"[{attrs}.s, {attrs}.b].indexOf(true) == 1", int_then_string)
    sums = (f"[{attrs}.i, {attrs}.s].sum() == 0", f"[{attrs}.s, {attrs}.i].sum() == 0")
    assert runtime_error(sums[0], int_then_string) == "no such overload"
    assert runtime_error(sums[1], int_then_string) == "no such overload: sum(list)"


@pytest.mark.parametrize(("expression", "message"), [
    ("['a', 'b'].sum() == 'c'", "found no matching overload for 'sum'"),
    ("[[1], [2]].min() == [1]", "found no matching overload for 'min'"),
    ("[{'a': 1}, {'b': 2}].max() == {'b': 2}", "found no matching overload for 'max'"),
    ("[quantity('1')].isSorted()", "found no matching overload for 'isSorted'"),
    ("[1].sum() == 1.0", "found no matching overload for '_==_'"),  # sum of ints is an int
])
def test_compile_errors(expression: str, message: str) -> None:
    assert message in compile_error(expression).message


@pytest.mark.parametrize("expression", [
    "type([1.0].sum()) == double && type([1].max()) == int",
    "type([b'a'].min()) == bytes && type([duration('1s')].sum()) == google.protobuf.Duration",
    "[duration('1s')].max() + duration('1s') == duration('2s')",
    # The checker's choice reaches the run time (_checked.retarget): the zero of the type,
    # uints as uints (the library hands Python a uint as an int).
    "type([1.0].filter(x, x > 2.0).sum()) == double",
    "type([1u].filter(x, x > 2u).sum()) == uint",
    "type([2u, 1u].max()) == uint && type([2u, 1u].min()) == uint",
    "[9223372036854775807u, 9223372036854775807u].sum() == 18446744073709551614u",
    "[1, 2].map(x, [3u, 4u].filter(y, y > 3u).sum()).sum() == 8u",
    "{'a': [1.0].filter(x, x > 1.0).sum()}.a + 0.5 == 0.5",
    "type(dyn([]).sum()) == int",  # no single overload: cel-go's run time takes int's
])
def test_results_keep_their_types(expression: str) -> None:
    assert run(expression) == (True, True)


def test_typed_overflow() -> None:
    assert run("[18446744073709551615u, 1u].sum() == 0u") == (False, "unsigned integer overflow")


@pytest.mark.parametrize(("expression", "message", "column"), [
    # list(A).indexOf(A) is declared list(dyn), dyn (the library cannot implement a type
    # parameter): the checked types are unified as cel-go does (_checked), with its text.
    ("[1, 2].indexOf('a') == 0", "'list(int).(string)'", 15),
    ("[1, 2].lastIndexOf(2u) == 0", "'list(int).(uint)'", 19),
    ("[1.0].filter(x, x > 0.0).indexOf(1) == 0", "'list(double).(int)'", 33),
    ("[duration('1s')].indexOf(1) == 0", "'list(duration).(int)'", 25),
    ("[[1]].indexOf(['a']) == 0", "'list(list(int)).(list(string))'", 14),
    ("[{'a': 1}].indexOf({1: 2}) == 0", "'list(map(string, int)).(map(int, int))'", 19),
    ("[quantity('1')].indexOf(semver('1.0.0')) == 0",
     "'list(kubernetes.Quantity).(kubernetes.Semver)'", 24),
    ("[ip('1.2.3.4')].indexOf(cidr('1.2.3.4/32')) == 0", "'list(net.IP).(net.CIDR)'", 24),
    ("[1].indexOf(null) == 0", "'list(int).(null)'", 12),
    ("[[]].indexOf(1) == 0", "'list(list(dyn)).(int)'", 13),
    ("[int].indexOf(1) == 0", "'list(type(int)).(int)'", 14),
    ("[1].exists(x, [x].indexOf('a') == 0)", "'list(int).(string)'", 26),
])
def test_index_of_an_element_of_another_type_does_not_compile(
        expression: str, message: str, column: int) -> None:
    error = compile_error(expression)
    name = "lastIndexOf" if "lastIndexOf" in expression else "indexOf"
    assert error.message == f"found no matching overload for '{name}' applied to {message}"
    assert (error.line, error.column) == (1, column)


@pytest.mark.parametrize("expression", [
    "[].indexOf('a') == -1", "[[1]].indexOf([]) == -1", "[{}].indexOf({1: 'a'}) == -1",
    "['a'].indexOf(dyn(1)) == -1", "dyn([1]).indexOf('a') == -1",
    "[timestamp('2020-01-01T00:00:00Z')].lastIndexOf(null) == -1",
    "[semver('1.0.0')].indexOf(null) == -1", "'abc'.indexOf('b') == 1",
])
def test_index_of_what_cel_go_unifies(expression: str) -> None:
    assert run(expression) == (True, True)


def test_known_deviation_lists_of_optional_values() -> None:
    # docs/cel.md "Lists": the library crashes the process handing Python an optional value
    # inside a list, so a list function that may get one does not compile here.
    for expression in ("[optional.of(1)].indexOf(optional.none()) == 0",
                       "dyn([optional.of(1)]).min() == 1", "[dyn(optional.of(1))].sum() == 1"):
        assert "lists that may hold optional values are not supported" in compile_error(
            expression).message
    assert run("[1, 2].sum() == 3 && optional.of(1).hasValue()") == (True, True)


def test_implementations_directly() -> None:
    assert list_sum([]) == 0 and list_sum([1.5]) == 1.5
    assert cel_equal(1, 1.0) and not cel_equal(True, 1) and not cel_equal(float("nan"), 1)
    assert cel_equal({1: [2]}, {1: [2.0]}) and not cel_equal({True: 1}, {1: 1})
    assert cel_equal(bytearray(b"a"), b"a")


def test_a_selector_using_each_function() -> None:
    device = {"attributes": {"cores": {"int": 108}, "numa": {"int": 1}, "model": {
        "string": "A100"}}}
    attrs = 'device.attributes["gpu.example.com"]'
    assert matches(f"[{attrs}.numa, {attrs}.cores].isSorted() && "
                   f"[{attrs}.numa, {attrs}.cores].sum() == 109 && "
                   f"[{attrs}.numa, {attrs}.cores].min() == 1 && "
                   f"[{attrs}.numa, {attrs}.cores].max() == 108 && "
                   f"[{attrs}.model, {attrs}.model].lastIndexOf('A100') == 1 && "
                   f"[{attrs}.cores].indexOf(108) == 0", device)
    assert not matches(f"[{attrs}.cores, {attrs}.numa].isSorted()", device)
    assert value("[1, 2, 3].sum() == 6")
