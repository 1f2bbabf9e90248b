"""Kubernetes' regex library (find, findAll) in resource.k8s.io/v1 device selectors
(allocation/engine/cel/_regex.py, declared by _library.py).

The cases of upstream's own tests (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel
validation_test.go "stdlib regex functions" at v0.36.2, ``self.str`` written as a literal)
and the others here were checked against upstream's DRA cel package (k8s.io/apiserver
pkg/cel/library regex.go v0.36.2, Go's regexp) with /work/harness/celhar; docs/cel.md
("Regex") records the comparison.
"""

from __future__ import annotations

import pytest

from allocation.engine.cel._regex import compile_go, find, find_all
from tests.allocation.engine.cel.device_helpers import (
    compile_error,
    matches,
    runtime_error,
    value,
)

STR = "'this is a 123 string 456'"


@pytest.mark.parametrize("expression", [
    # upstream's valid cases
    f"{STR}.find('[0-9]+') == '123'", f"{STR}.find('[0-9]+') != '456'",
    f"{STR}.find('xyz') == ''",
    f"{STR}.findAll('[0-9]+') == ['123', '456']", f"{STR}.findAll('[0-9]+', 0) == []",
    f"{STR}.findAll('[0-9]+', 1) == ['123']", f"{STR}.findAll('[0-9]+', 2) == ['123', '456']",
    f"{STR}.findAll('[0-9]+', 3) == ['123', '456']",
    f"{STR}.findAll('[0-9]+', -1) == ['123', '456']",
    f"{STR}.findAll('xyz') == []", f"{STR}.findAll('xyz', 1) == []",
    # regex.go's examples
    "'abc 123'.find('[0-9]*') == ''",  # the leftmost match is the empty one at 0
    "'123 abc 456'.findAll('[0-9]*') == ['123', '', '', '', '', '456']",
    "'123 abc 456'.findAll('[0-9]*', 1) == ['123']",
    # Go's empty matches: none right after a match, then one character on
    "'aab'.findAll('a*') == ['aa', '']", "'abc'.findAll('x*') == ['', '', '', '']",
    "'abcabc'.findAll('b|', -1) == ['', 'b', '', 'b', '']",
    "'aaa'.findAll('a*?') == ['', '', '', '']", "'aaa'.findAll('a|') == ['a', 'a', 'a']",
    "''.findAll('') == ['']", "''.find('x*') == ''", "'abc'.findAll('', 2) == ['', '']",
    "'abc'.findAll('$') == ['']", "'abc'.findAll('\\\\b') == ['', '']",
    "'abc'.findAll('', 9223372036854775807) == ['', '', '', '']",
    "'abc'.findAll('', -9223372036854775807) == ['', '', '', '']",
    # UTF-8: Go steps over a whole character after an empty match
    "'é€😀'.findAll('') == ['', '', '', '']", "'é€😀'.findAll('.', 2) == ['é', '€']",
    "'é€😀x'.find('[^a-z]+$') == ''", "'αβγ'.find('\\\\p{Greek}+') == 'αβγ'",
    "'a١'.find('\\\\d') == ''", "'a١'.find('\\\\pN') == '١'",
    "'KELVIN K k'.findAll('(?i)k') == ['K', 'K', 'k']",
    # only at character boundaries: RE2's own search finds \B inside é's two bytes
    "'AéA'.findAll('\\\\B') == []", "'cA 2٣'.findAll('\\\\B') == ['', '']",
    # Go's syntax: leftmost-first, . not matching a newline, ^ and $ at the ends
    "'a\\nb'.find('a.b') == ''", "'a\\nb'.find('(?s)a.b') == 'a\\nb'",
    "'ab\\ncd'.findAll('^.') == ['a']", "'ab\\ncd'.findAll('(?m)^.') == ['a', 'c']",
    "'abc'.find('(?i)ABC') == 'abc'", "'abc'.find('(?U)a+') == 'a'",
    "'aaa'.find('a{2,}?') == 'aa'", "'abc'.find('[[:^alpha:]]') == ''",
    "'AbC'.findAll('[[:upper:]]') == ['A', 'C']", "'ab ab'.findAll('\\\\bab\\\\b') == ['ab', 'ab']",
    "'abc'.find('(?<n>b)') == 'b'", "'abc'.find('(?P<1a>x)') == ''",
    "'abc'.find('\\\\Qa.b\\\\E') == ''", "'abc'.find('^b') == ''",
])
def test_upstream_values(expression: str) -> None:
    assert value(expression)


@pytest.mark.parametrize(("pattern", "message"), [
    (")", "unexpected ): `)`"),  # upstream's own case
    ("(", "missing closing ): `(`"),
    ("[a", "missing closing ]: `[a`"),
    ("\\\\C", "invalid escape sequence: `\\C`"),  # RE2 accepts it, Go does not
    ("\\\\Z", "invalid escape sequence: `\\Z`"),
    ("\\\\8", "invalid escape sequence: `\\8`"),
    ("a{1001}", "invalid repeat count: `{1001}`"),
    ("a**", "invalid nested repetition operator: `**`"),
    ("x{2}{3}", "invalid nested repetition operator: `{2}{3}`"),
    ("*a", "missing argument to repetition operator: `*`"),
    ("[z-a]", "invalid character class range: `z-a`"),
    ("[[:foo:]]", "invalid character class range: `[:foo:]`"),
    ("\\\\p{Foo}", "invalid character class range: `\\p{Foo}`"),
    ("[a-\\\\d]", "invalid escape sequence: `\\d`"),
    ("a\\\\", "trailing backslash at end of expression: ``"),
    ("(?=a)", "invalid or unsupported Perl syntax: `(?=`"),
    ("(?#c)", "invalid or unsupported Perl syntax: `(?#`"),
])
def test_literal_patterns_that_do_not_compile(pattern: str, message: str) -> None:
    # upstream compiles a literal pattern when it makes the program (cel.OptimizeRegex)
    for call in (f"find('{pattern}') == ''", f"findAll('{pattern}') == []",
                 f"findAll('{pattern}', 1) == []"):
        error = compile_error(f"device.driver.{call}")
        assert error.message == f"program instantiation failed: error parsing regexp: {message}"
        assert (error.line, error.column) == (1, 20 if call.startswith("find(") else 23)


@pytest.mark.parametrize(("pattern", "message"), [
    # Go parses left to right: an error before \C is reported, the missing ) at the end not
    ("??-\\C", "missing argument to repetition operator: `??`"),
    ("(\\C", "invalid escape sequence: `\\C`"),
    ("\\pN)a\\C", "unexpected ): `\\pN)a\\C`"),  # of the whole pattern, as Go
    ("\\Q\\C\\E", None),  # quoted: the characters \ and C
])
def test_go_refuses_any_byte(pattern: str, message: str | None) -> None:
    literal = pattern.replace("\\", "\\\\")
    expression = f"device.driver.findAll(device.driver.substring(0, 0) + '{literal}') == []"
    if message is None:
        assert value(expression)
    else:
        assert runtime_error(expression) == f"Illegal regex: error parsing regexp: {message}"


def test_a_dynamic_pattern_that_does_not_compile_is_a_runtime_error() -> None:
    assert runtime_error('"abc".find(device.driver + "(") == ""') == (
        "Illegal regex: error parsing regexp: missing closing ): `gpu.example.com(`")
    assert runtime_error('"x".findAll(device.driver + "[", 1) == []') == (
        "Illegal regex: error parsing regexp: missing closing ]: `[`")


def test_a_selector_using_both() -> None:
    device = {"attributes": {"model": {"string": "NVIDIA A100-SXM4-80GB"}}}
    model = 'device.attributes["gpu.example.com"].model'
    assert matches(f"{model}.find('[0-9]+GB') == '80GB' && "
                   f"{model}.findAll('[A-Z][0-9]+').size() == 2 && "
                   f"{model}.findAll('[0-9]+', 1) == ['100']", device)
    assert not matches(f"{model}.find('H[0-9]+') != ''", device)


def test_the_functions_directly() -> None:
    assert find("aab", "a*") == "aa" and find_all("aab", "a*") == ["aa", ""]
    assert find_all("aab", "a*", 0) == [] and find_all("aab", "a*", 1) == ["aa"]
    assert find_all("😀😀", "") == ["", "", ""]
    assert compile_go("a+") is compile_go("a+")  # compiled once
    with pytest.raises(ValueError, match="missing closing \\)"):
        compile_go("(")
    with pytest.raises(ValueError, match="^Illegal regex: error parsing regexp"):
        find("x", "(")
