from __future__ import annotations

import pytest

from allocation.engine.attributes import Attribute, AttributeSet
from allocation.engine.cel import (
    MAX_EXPRESSION_LENGTH,
    CelCompileError,
    CelEvaluationError,
    SelectorOutcome,
    compile_expression,
    compile_selector,
    reset_stats,
    stats,
    validate_selector,
)
from allocation.engine.cel._analysis import attribute_reads
from allocation.engine.quantity import Quantity
from allocation.engine.versions import parse_version


def _device(memory: str = "40Gi", version: str = "v12.1", uuid: str = "GPU-1") -> AttributeSet:
    return AttributeSet([
        Attribute("memory", "quantity", Quantity.parse(memory)),
        Attribute("runtimeVersion", "version", parse_version(version)),
        Attribute("model", "string", "A100"),
        Attribute("UUID", "string", uuid),
        Attribute("cores", "int", 3),
        Attribute("mig", "bool", True),
        Attribute("tags", "stringSlice", ("a", "b")),
    ])


def _match(source: str, device: AttributeSet | None = None) -> SelectorOutcome:
    return compile_selector(source).evaluate(device or _device())


@pytest.mark.parametrize(
    ("source", "memory", "matched"),
    [
        ('attributes["runtimeVersion"] >= "v12.0.0" && attributes["memory"] >= "32Gi"',
         "40Gi", True),
        ('attributes["runtimeVersion"] >= "v12.0.0" && attributes["memory"] >= "32Gi"',
         "16Gi", False),
        ('versions["runtimeVersion"] >= "v12.0.0" && quantities["memory"] >= "8Gi"', "8Gi", True),
        ('quantities["memory"] <= "16Gi"', "16Gi", True),
        ('quantities["memory"] <= "16Gi"', "17Gi", False),
        ('attributes["memory"] <= "16Gi"', "16384Mi", True),
        ('quantities["memory"] == "16384Mi"', "16Gi", True),
        ('quantities["memory"] != "16Gi"', "16Gi", False),
        ('"16Gi" == quantities.memory', "16Gi", True),
        ('quantities.memory > "17179869183"', "16Gi", True),
        ('quantities.memory < "16G"', "16Gi", False),
    ],
)
def test_seed_comparisons(source: str, memory: str, matched: bool) -> None:
    assert _match(source, _device(memory=memory)) == SelectorOutcome(matched)


@pytest.mark.parametrize(
    "source",
    [
        'quantity("1Gi").isGreaterThan(quantity("1G"))',
        'quantity("1G").isLessThan(quantity("1Gi"))',
        'quantity("1k").compareTo(quantity("1000")) == 0',
        'quantities.memory.compareTo(quantity("40Gi")) == 0',
        'quantities.memory.asInteger() == 42949672960',
        '!quantity("1.5").isInteger() && quantity("2k").isInteger()',
        'quantities.memory.add(quantity("1Gi")) == "41Gi"',
        'quantities.memory.sub(1) < "40Gi"',
        'isQuantity("5m") && !isQuantity("5x")',
        'semver("1.2.3").isLessThan(semver("1.10.0"))',
        'semver("v2.0").compareTo(semver("2.0.0")) == 0',
        'versions.runtimeVersion.major() == 12 && versions.runtimeVersion.minor() == 1',
        'semver("1.2.3").patch() == 3 && isSemver("1.2") && !isSemver("x")',
        'versions.runtimeVersion > semver("12.0.9")',
        'attributes.memory == quantity("40Gi")',
    ],
)
def test_kubernetes_library_functions(source: str) -> None:
    assert _match(source) == SelectorOutcome(True)


@pytest.mark.parametrize(
    "source",
    [
        'strings.model == "A100" && strings.model != "H100"',
        'ints.cores == 3 && attributes.cores >= 2.5 && ints.cores < 4',
        'ints.cores == 3.0',
        'bools.mig && attributes.mig == true',
        '"b" in stringSlices.tags && stringSlices.tags.exists(t, t == "a")',
        'attributes.tags == ["a", "b"] && size(stringSlices.tags) == 2',
        'strings.model.matches("^A1") && strings.model.startsWith("A")',
        'has(attributes.model) && !has(attributes.nothing)',
        'attributes.exists(name, name == "UUID")',
    ],
)
def test_plain_cel_still_works(source: str) -> None:
    assert _match(source) == SelectorOutcome(True)


def test_missing_key_is_no_match_with_message() -> None:
    outcome = _match('attributes["nothing"] >= "1Gi"')
    assert not outcome.matched
    assert "nothing" in (outcome.error or "")


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ('attributes.cores == "3"', "_==_"),
        ('attributes.model >= 3', "No matching overloads"),
        ('versions.runtimeVersion < quantities.memory', "expected a version"),
        ('quantities.memory >= "lots"', "not a valid quantity"),
        ('versions.runtimeVersion >= "twelve"', "not a valid semantic version"),
        ('quantities.memory.major() == 1', "expected a version"),
        ('attributes.cores', "not bool"),
    ],
)
def test_runtime_errors_are_no_match(source: str, fragment: str) -> None:
    outcome = _match(source)
    assert not outcome.matched
    assert outcome.error and fragment in outcome.error


def test_syntax_error_has_position() -> None:
    with pytest.raises(CelCompileError) as caught:
        compile_selector('quantities["memory"] >= ')
    assert caught.value.line == 1 and caught.value.column == 25
    assert str(caught.value) == "line 1, column 25: the expression ends too early"


def test_type_errors_and_non_bool_results_fail_to_compile() -> None:
    with pytest.raises(CelCompileError, match="no matching overload"):
        compile_selector('ints["cores"] == "x"')
    with pytest.raises(CelCompileError, match="must evaluate to bool, not int"):
        compile_selector("ints.cores + 1")
    with pytest.raises(CelCompileError, match="must evaluate to bool, not a map or list "
                                              "holding a map with double keys"):
        compile_selector("{1.5: 1}")
    with pytest.raises(CelCompileError, match="undeclared reference"):
        compile_selector("device.attributes.model == 'x'")
    assert validate_selector("true") == []
    assert validate_selector("1 +")[0].startswith("line 1, column ")


def test_over_long_expression_is_rejected() -> None:
    source = "true || " * 1400 + "true"
    with pytest.raises(CelCompileError, match=f"longer than the {MAX_EXPRESSION_LENGTH}-byte"):
        compile_selector(source)
    assert "expression is 11204 bytes" in validate_selector(source)[0]


def test_runaway_comprehensions_are_refused_or_end_in_an_error() -> None:
    items = "[" + ",".join(["1"] * 100) + "]"
    three_deep = f"{items}.map(a, {items}.map(b, {items}.map(c, a + b + c))).size() > 0"
    with pytest.raises(CelCompileError, match="estimated cost 17,333,323 exceeds"):
        compile_selector(three_deep)
    items = "[" + ",".join(["1"] * 101) + "]"  # 10,201 iterations: cheap, but over the budget
    outcome = _match(f"{items}.map(a, {items}.map(b, a + b)).size() > 0")
    assert not outcome.matched and outcome.error == "Iteration budget exceeded"


def test_string_doubling_is_rejected_before_it_runs() -> None:
    body = "size(x20) > 0"
    for level in range(20, 0, -1):
        body = f"[x{level - 1} + x{level - 1}].map(x{level}, {body})"
    nested = f'["ab"].map(x0, {body}).size() > 0'
    assert len(validate_selector(nested)) == 1
    assert validate_selector(nested)[0].startswith("CEL expression too expensive: it may build")
    small_fanout = ('["ab"].map(a, [a+a+a+a+a+a+a+a+a].map(b, b+b+b+b+b+b+b+b+b).size() > 0)'
                    '.all(r, r)')
    assert _match(small_fanout) == SelectorOutcome(True)  # 162 characters: harmless


def test_cache_evaluates_once_per_distinct_read_values() -> None:
    selector = compile_selector('quantities["memory"] >= "32Gi" && strings["model"] == "A100"')
    assert selector.reads == frozenset({"memory", "model"})
    reset_stats()
    for uuid in ("GPU-1", "GPU-2", "GPU-3"):
        assert selector.evaluate(_device(uuid=uuid)).matched
    assert stats().evaluations == 1 and stats().lookups == 3
    assert not selector.evaluate(_device(memory="16Gi")).matched
    assert stats().evaluations == 2


def test_cache_takes_one_quantity_spelled_two_ways_as_one() -> None:
    # a source no other test compiles: a selector and its results live for the process
    selector = compile_selector('quantities["memory"] >= "29Gi"')
    reset_stats()
    assert selector.evaluate(_device(memory="80Gi")).matched
    assert selector.evaluate(_device(memory="85899345920")).matched
    assert not selector.evaluate(_device(memory="16Gi")).matched
    assert stats().evaluations == 2 and stats().lookups == 3


def test_cache_key_includes_the_type() -> None:
    selector = compile_selector("attributes.x == true")
    as_bool = AttributeSet([Attribute("x", "bool", True)])
    as_int = AttributeSet([Attribute("x", "int", 1)])
    assert selector.evaluate(as_bool).matched
    assert not selector.evaluate(as_int).matched


def test_cache_keys_on_everything_when_reads_are_unknown() -> None:
    selector = compile_selector('attributes.exists(k, k == "UUID")')
    assert selector.reads is None
    reset_stats()
    selector.evaluate(_device(uuid="a"))
    selector.evaluate(_device(uuid="b"))
    selector.evaluate(_device(uuid="b"))
    assert stats().evaluations == 2


def test_selectors_are_compiled_once() -> None:
    assert compile_selector("bools.mig") is compile_selector("bools.mig")


@pytest.mark.parametrize(
    ("source", "reads"),
    [
        ('attributes["memory"] >= "1Gi"', {"memory"}),
        ("quantities.memory >= '1Gi' && strings.model == 'x'", {"memory", "model"}),
        ('has(attributes.x) || ints["y"] > 1', {"x", "y"}),
        ('strings.model == "attributes[k]"', {"model"}),
        ('quantity("1") == quantity("1")', set()),
        ("object.attributes.x == 1", set()),
        ('attributes.exists(k, k == "x")', None),
        ('"x" in attributes', None),
        ('attributes[strings.key] == 1', None),
        ('size(ints) > 1', None),
        (r'attributes["a\x41"] == 1', {"aA"}),
        ('attributes[b"x"] == 1', None),
    ],
)
def test_reads_analysis(source: str, reads: set[str] | None) -> None:
    expected = None if reads is None else frozenset(reads)
    assert attribute_reads(source) == expected


def test_general_expressions() -> None:
    expression = compile_expression(
        '{"count": object.spec.count * 2, "memory": quantity("1.5Gi"), "xs": [1, "a", null]}',
        {"object": "dyn"},
    )
    assert expression.evaluate(object={"spec": {"count": 4}}) == {
        "count": 8, "memory": "1536Mi", "xs": [1, "a", None],
    }
    with pytest.raises(CelEvaluationError, match="count"):
        expression.evaluate(object={"spec": {}})
    with pytest.raises(CelEvaluationError, match="no value for variable object"):
        expression.evaluate()
    with pytest.raises(CelCompileError):
        compile_expression("object.", {"object": "dyn"})
    items = "[" + ",".join(["1"] * 200) + "]"
    budget = compile_expression(f"{items}.map(a, {items}.map(b, a))", {})
    with pytest.raises(CelEvaluationError, match="budget"):
        budget.evaluate()
