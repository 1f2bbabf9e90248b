"""Kubernetes' format library in resource.k8s.io/v1 device selectors
(allocation/engine/cel/_format.py, declared by _library.py).

The first cases are upstream's own (k8s.io/apiserver pkg/cel/library format_test.go,
v0.36.2), with their expected values and messages; the messages of the validators come from
k8s.io/apimachinery v0.36.2 (pkg/util/validation, pkg/api/validate/content) and
kube-openapi's strfmt (docs/cel.md "format").
"""

from __future__ import annotations

import pytest

from allocation.engine.cel import compile_device_selector
from allocation.engine.cel._format import NAMES, optional_calls, original_position, validate
from tests.allocation.engine.cel.device_helpers import compile_error, value

LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
         "and must start and end with an alphanumeric character (e.g. 'my-name',  or "
         "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
             "'-' or '.', and must start and end with an alphanumeric character (e.g. "
             "'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
              "with an alphabetic character, and end with an alphanumeric character (e.g. "
              "'my-name',  or 'abc-123', regex used for validation is "
              "'[a-z]([-a-z0-9]*[a-z0-9])?')")
NAME_PART = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
             "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
             "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
             "[A-Za-z0-9]')")
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', "
               "'_' or '.', and must start and end with an alphanumeric character (e.g. "
               "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
               "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


@pytest.mark.parametrize(("expression", "messages"), [
    # format_test.go TestFormat: None for valid, else the messages.
    ('format.dns1123Label().validate("my-label-name")', None),
    ('format.dns1123Subdomain().validate("apiextensions.k8s.io")', None),
    ('format.qualifiedName().validate("apiextensions.k8s.io/v1beta1")', None),
    ('format.dns1123LabelPrefix().validate("my-label-prefix-")', None),
    ('format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-")', None),
    ('format.dns1035LabelPrefix().validate("my-label-prefix-")', None),
    ('format.uri().validate("http://example.com")', None),
    ('format.uuid().validate("123e4567-e89b-12d3-a456-426614174000")', None),
    ('format.byte().validate("aGVsbG8=")', None),
    ('format.date().validate("2021-01-01")', None),
    ('format.datetime().validate("2021-01-01T00:00:00Z")', None),
    ('format.dns1123Label().validate("contains a space")', [LABEL]),
    ('format.dns1123Subdomain().validate("contains a space")', [SUBDOMAIN]),
    ('format.dns1035Label().validate("contains a space")', [LABEL_1035]),
    ('format.qualifiedName().validate("contains a space")', [NAME_PART]),
    ('format.dns1123LabelPrefix().validate("contains a space-")', [LABEL]),
    ('format.dns1123SubdomainPrefix().validate("contains a space-")', [SUBDOMAIN]),
    ('format.dns1035LabelPrefix().validate("contains a space-")', [LABEL_1035]),
    ('format.dns1123Label().validate("my-label-name")', None),
    ('format.dns1123Subdomain().validate("example.com")', None),
    ('format.dns1035Label().validate("my-label-name")', None),
    ('format.qualifiedName().validate("my.name")', None),
    ('format.byte().validate("aGVsbG8=")', None),
    ('format.byte().validate("aGVsbG8")', ["invalid base64"]),
    ('format.date().validate("2020-01-01")', None),
    ('format.date().validate("2020-01-32")', ["invalid date"]),
    ('format.datetime().validate("2020-01-01T00:00:00Z")', None),
    ('format.datetime().validate("2020-01-32T00:00:00Z")', ["invalid datetime"]),
    ('format.labelValue().validate("my-cool-label-Value")', None),
    ('format.labelValue().validate("my-cool-label-Value!!\\n\\n!!!")', [LABEL_VALUE]),
])
def test_upstream_format_cases(expression: str, messages: list[str] | None) -> None:
    if messages is None:
        assert value(f"{expression} == optional.none()")
        assert value(f"!{expression}.hasValue()")
    else:
        quoted = ", ".join('"' + m.replace("\\", "\\\\").replace('"', '\\"') + '"'
                           for m in messages)
        assert value(f"{expression} == optional.of([{quoted}])")
        assert value(f"{expression}.value() == [{quoted}]")


def test_named_formats_and_their_equality() -> None:
    # format_test.go: every name looks up, equals its constant, and differs from the others.
    assert len(NAMES) == 13
    assert value('format.named("unknown").hasValue() == false')
    assert value('format.named("dns1123label") == optional.none()')  # names are exact
    for name in NAMES:
        assert value(f'format.named("{name}").hasValue()')
        assert value(f'format.named("{name}").value() == format.{name}()')
        others = " || ".join(f"format.{name}() == format.{other}()"
                             for other in NAMES if other != name)
        assert value(f"!({others})")


@pytest.mark.parametrize(("format_name", "text", "messages"), [
    ("DNS1123Label", "a" * 64, ["must be no more than 63 characters"]),
    ("DNS1123Label", "a.b", ["must not contain dots"]),
    ("DNS1123Label", "A", [LABEL]),
    ("DNS1123Label", "", [LABEL]),
    ("DNS1123Label", "a\n", [LABEL]),  # Go's $ is the end of the text
    ("DNS1123Label", "-" * 64, ["must be no more than 63 characters", LABEL]),
    ("DNS1123Subdomain", "a" * 254, ["must be no more than 253 characters"]),
    ("DNS1123Subdomain", "a-." * 85, ["must be no more than 253 characters", SUBDOMAIN]),
    ("DNS1035Label", "1a", [LABEL_1035]),
    # maskTrailingDash replaces the last two characters of "x-" names with "a"
    ("DNS1123LabelPrefix", "a-", []),
    ("DNS1123LabelPrefix", "ab.-", []),  # "ab" + "a": the dot goes too
    ("DNS1123LabelPrefix", "a.b-", ["must not contain dots"]),  # "a.a"
    ("DNS1123LabelPrefix", "-", [LABEL]),  # a single character is not masked
    ("DNS1035LabelPrefix", "1-", []),  # "a"
    ("QualifiedName", "example.com/MyName", []),
    ("QualifiedName", "/a", ["prefix part must be non-empty"]),
    ("QualifiedName", "a/", ["name part must be non-empty", NAME_PART]),
    ("QualifiedName", "A.com/a", [f"prefix part {SUBDOMAIN}"]),
    ("QualifiedName", "a" * 64, ["name part must be no more than 63 bytes"]),
    ("QualifiedName", "a/b/c", ["a valid label key must consist of alphanumeric characters, "
                                "'-', '_' or '.', and must start and end with an alphanumeric "
                                "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
                                "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
                                "[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
                                "(e.g. 'example.com/MyName')"]),
    ("LabelValue", "", []),
    ("LabelValue", "é" * 32, ["must be no more than 63 bytes", LABEL_VALUE]),  # bytes
    ("URI", "x", ['parse "x": invalid URI for request']),
    ("URI", "/x", []),
    ("uuid", "123E4567E89B12D3A456426614174000", []),  # upper case, no dashes
    ("uuid", "123e4567-e89b-12d3-a456-42661417400", ["does not match the UUID format"]),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000\n", ["does not match the UUID format"]),
    ("byte", "", ["invalid base64"]),
    ("byte", "aGk=", []),
    ("byte", "a-_b", ["invalid base64"]),  # the standard alphabet only
    ("date", "2024-02-29", []),
    ("date", "2023-02-29", ["invalid date"]),
    ("date", "2000-02-29", []),
    ("date", "1900-02-29", ["invalid date"]),
    ("date", "0000-02-29", []),  # year 0 is a leap year to Go
    ("date", "2024-13-01", ["invalid date"]),
    ("date", "2024-1-01", ["invalid date"]),
    ("date", "2024-01-01 ", ["invalid date"]),
    ("datetime", "2024-01-01t10:00:00.5+01:00", []),
    ("datetime", "2024-01-01T23:59:59z", []),
    ("datetime", "2024-01-01T24:00:00Z", ["invalid datetime"]),
    ("datetime", "2024-01-01T00:60:00Z", ["invalid datetime"]),
    ("datetime", "2024-01-01T00:00:00", ["invalid datetime"]),  # a zone is required
    ("datetime", "2024-01-01T00:00:00x5Z", []),  # "." in strfmt's pattern is any character
    ("datetime", "2024-01-01T00:00:00ZTgarbage", []),  # only the first two parts are read
    ("datetime", "2024-01-01", ["invalid datetime"]),
])
def test_validators(format_name: str, text: str, messages: list[str]) -> None:
    assert validate(format_name, text) == messages


def test_validate_reads_device_attributes() -> None:
    driver = "gpu.example.com"
    selector = compile_device_selector(
        'format.dns1123Label().validate(device.attributes["gpu.example.com"].model)'
        '.orValue([]).size() == 0')
    assert selector.matches(driver, {"name": "g", "attributes": {"model": {"string": "a100"}}})
    assert not selector.matches(driver, {"name": "g", "attributes": {"model": {"string": "A"}}})
    assert compile_device_selector(
        "!format.dns1123Subdomain().validate(device.driver).hasValue()").matches(driver, {})


@pytest.mark.parametrize(("expression", "message", "column"), [
    # upstream: '... applied to 'kubernetes.NamedFormat.(int)'' (member calls, docs/cel.md)
    ('format.dns1123Label().validate(1) == optional.none()',
     "found no matching overload for 'validate' applied to '(kubernetes.NamedFormat, int)'", 31),
    ('format.named(1).hasValue()',
     "found no matching overload for 'format.named' applied to '(int)'", 13),
    ('format.named("uri").hasValue() && 1 + "a"',
     "found no matching overload for '_+_' applied to '(int, string)'", 37),
    ('format.named("x")', "must evaluate to bool or the unknown type, not "
     "optional_type<kubernetes.namedformat>", None),
])
def test_compile_errors(expression: str, message: str, column: int | None) -> None:
    error = compile_error(expression)
    assert (error.message, error.column) == (message, column)


def test_optional_calls_inserts_after_each_call_and_maps_positions_back() -> None:
    source = 'format.named("a").value().validate(x("(")) && y.validate(")")\n || z'
    text, offsets = optional_calls(source)
    assert text == ('format.named("a")[?""].value().validate(x("("))[?""] && '
                    'y.validate(")")[?""]\n || z')
    assert offsets == [17, 47, 71]
    assert original_position(text, offsets, 1, 23) == (1, 18)  # ".value" after the insertion
    assert original_position(text, offsets, 1, 19) == (1, 18)  # inside it: where it stands
    assert original_position(text, offsets, 2, 5) == (2, 5)
    # not calls: a field, a string, another namespace
    for untouched in ['x.validate', '"format.named(1)"', 'a.format.named(1)']:
        assert optional_calls(untouched) == (untouched, [])
