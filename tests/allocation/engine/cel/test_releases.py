"""New device selectors by the API server's CEL compatibility version
(``allocation/engine/cel/releases.py``): Kubernetes adds the lists extension at 1.34, so a
new selector may use it from compatibility version 1.34 (Kubernetes 1.35) on."""

from __future__ import annotations

import pytest

from allocation.engine.cel import CelCompileError, compile_device_selector
from allocation.engine.cel._library import compile_device_program
from allocation.engine.cel.releases import check_new_device_selector

_LISTS = "new selectors may use the CEL lists extension from compatibility version 1.34 on"

# One expression per function of the lists extension, with the column of the call's "(",
# where cel-go reports the undeclared function.
_LIST_FUNCTIONS = [
    ("slice", "[1, 2, 3].slice(1, 2) == [2]", 16),
    ("flatten", "[[1], [2]].flatten().size() == 2", 19),
    ("sort", 'device.attributes["d"].all(k, [k].sort() == [k])', 39),
    ("sortBy", "[{'a': 2}, {'a': 1}].sortBy(e, e.a)[0].a == 1", 28),
    ("range", "lists.range(3).size() == 3", 12),
    ("reverse", "[1, 2].reverse()[0] == 2", 15),
    ("distinct", "[1, 1].distinct().size() == 1", 16),
]


def _refusal(expression: str, compatibility: tuple[int, int]) -> CelCompileError:
    with pytest.raises(CelCompileError) as caught:
        check_new_device_selector(expression, compatibility=compatibility)
    return caught.value


@pytest.mark.parametrize(("function", "expression", "column"), _LIST_FUNCTIONS)
def test_lists_extension_is_refused_before_compatibility_134(function, expression, column):
    compile_device_selector(expression)  # the scheduler's (stored-expressions) environment
    error = _refusal(expression, (1, 33))
    assert error.message == (f"undeclared reference to '{function}' (in container ''): "
                             f"{_LISTS}, not at 1.33")
    assert (error.line, error.column) == (1, column)
    check_new_device_selector(expression, compatibility=(1, 34))
    check_new_device_selector(expression, compatibility=(1, 35))


def test_the_error_named_is_the_first_at_a_call():
    # cel-go reports 'lists' (column 1) before 'range', and sortBy's variable 'e' after it.
    error = _refusal("size(lists.range(2)) == 2 && [1].distinct() == [1]", (1, 33))
    assert error.message.startswith("undeclared reference to 'range' ")
    assert (error.line, error.column) == (1, 17)
    error = _refusal("true &&\n [1].sort() == [1]", (1, 33))
    assert (error.line, error.column) == (2, 10)


@pytest.mark.parametrize("expression", [
    "[1].first().hasValue() && [1].last().value() == 1",  # optional types (1.28), not lists
    "[1, 2].all(i, v, i < v)",  # two-variable comprehensions (1.32)
    'semver("1.2.3").isGreaterThan(semver("1.0.0"))',  # semver (1.33)
    'sets.contains([1, 2], [1]) && "a,b".split(",").size() == 2',
    'cel.bind(d, device.attributes["d"], "x" in d)',
])
def test_older_extensions_are_accepted_at_compatibility_133(expression):
    check_new_device_selector(expression, compatibility=(1, 33))


@pytest.mark.parametrize("compatibility", [(1, 33), (1, 34), (1, 35)])
def test_regex_extension_is_in_no_release(compatibility):
    expression = 'regex.extract("abc", "b").hasValue()'
    compile_device_selector(expression)
    error = _refusal(expression, compatibility)
    assert error.message == ("undeclared reference to 'extract' (in container ''): "
                             "no Kubernetes release has the CEL regex extension")
    assert (error.line, error.column) == (1, 14)


def test_an_expression_that_never_compiles_keeps_its_own_error():
    error = _refusal("[1].sort() == [1] && device.x", (1, 33))
    assert error.message == "undeclared reference to 'sort' (in container '')"


def test_expressions_naming_no_missing_function_are_not_compiled_again(monkeypatch):
    from allocation.engine.cel import releases
    compiled = []
    monkeypatch.setattr(releases, "compile_device_program",
                        lambda *args: compiled.append(args))
    check_new_device_selector('device.driver == "sorted.example.com"', compatibility=(1, 33))
    assert compiled == []
    check_new_device_selector('device.driver == "sort.example.com"', compatibility=(1, 33))
    assert compiled == [('device.driver == "sort.example.com"', True, (1, 33), False)]


@pytest.mark.parametrize("expression", [
    'ip("10.0.0.1").isLoopback() || ip.isCanonical("::1")',
    'cidr("10.0.0.0/8").containsIP("10.0.0.1") && string(cidr("::/0")) == "::/0"',
])
def test_ip_and_cidr_libraries_of_130_are_in_every_supported_release(expression):
    # Kubernetes' IP and CIDR libraries came with 1.30, before every compatibility version
    # a supported profile has (1.33 and later): stored and new selectors both compile them.
    compile_device_selector(expression)
    for compatibility in [(1, 33), (1, 34), (1, 35)]:
        check_new_device_selector(expression, compatibility=compatibility)


@pytest.mark.parametrize("expression", [
    'url("https://x").getHost() == "x" && isURL("/p")',
    'format.dns1123Label().validate(device.driver).hasValue() || '
    'format.named("uri").value() == format.uri()',
])
def test_url_and_format_libraries_are_in_every_supported_release(expression):
    # Kubernetes' URL library came with 1.0 and format with 1.31, before every
    # compatibility version a supported profile has (1.33 and later): the new-expressions
    # environment of each compiles them (compiled here directly, since the check compiles
    # only expressions naming a missing extension's functions).
    compile_device_selector(expression)
    for compatibility in [(1, 33), (1, 34), (1, 35)]:
        check_new_device_selector(expression, compatibility=compatibility)
        assert compile_device_program(expression, True, compatibility).run_bool(
            {"device.driver": "x"})[0]
