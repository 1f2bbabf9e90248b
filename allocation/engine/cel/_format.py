"""Kubernetes' CEL format library, independent of the CEL library underneath.

resource.k8s.io/v1 selectors compile in Kubernetes' base environment, which has had
``k8s.io/apiserver/pkg/cel/library`` format.go since 1.31: ``format.named(name)`` (an
optional format) and ``format.<name>()`` give a ``kubernetes.NamedFormat``, an opaque type
equal by its name (``pkg/cel/format.go``); ``<format>.validate(s)`` is none when ``s`` is
valid, else the messages of the validation function upstream calls, word for word:
apimachinery's ``IsDNS1123Label`` and friends (``pkg/util/validation``,
``pkg/api/validate/content``; ``pkg/api/validation`` masks a prefix's trailing dash),
Go's ``url.ParseRequestURI`` for ``uri`` (``_url``), kube-openapi's strfmt for ``uuid``,
``byte``, ``date`` and ``datetime``. The messages are those of Kubernetes 1.36
(apimachinery v0.36.2, the same at v0.35.6); 1.34 words two of them differently
(docs/cel.md "format").

The manifest loader has its own, shorter words for the same name rules (``manifests``);
upstream's texts live here because they are what a selector sees.

The CEL library cannot declare a function whose result is optional, so the adapter
(``_library``) declares ``validate`` and ``format.named`` with a map result (empty, or one
entry under :data:`OPTIONAL_KEY`) and :func:`optional_calls` rewrites each call in the
source to index that map with ``[?""]``, which is the optional upstream returns.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from allocation.engine.cel._analysis import tokenize
from allocation.engine.cel._k8s import Overload
from allocation.engine.cel._url import request_uri_error

__all__ = ["FORMAT", "VALIDATION", "NAMED", "OPTIONAL_KEY", "FUNCTIONS", "NAMES",
           "validate", "optional_calls", "original_position"]

FORMAT = "format"
#: The kinds of the adapter's ``validate`` and ``format.named`` results (see above).
VALIDATION = "map:list:string"
NAMED = "map:format"
OPTIONAL_KEY = ""

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + "(\\." + _LABEL + ")*"
_LABEL_1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
_KEY = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_VALUE = "(" + _KEY + ")?"
_LABEL_MESSAGE = ("a lowercase RFC 1123 label must consist of lower case alphanumeric "
                  "characters or '-', and must start and end with an alphanumeric character")
_SUBDOMAIN_MESSAGE = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                      "characters, '-' or '.', and must start and end with an alphanumeric "
                      "character")
_LABEL_1035_MESSAGE = ("a DNS-1035 label must consist of lower case alphanumeric characters or "
                       "'-', start with an alphabetic character, and end with an alphanumeric "
                       "character")
_KEY_MESSAGE = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                "end with an alphanumeric character")
_VALUE_MESSAGE = ("a valid label must be an empty string or consist of alphanumeric "
                  "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                  "character")
# kube-openapi strfmt's patterns (Go's regexp: `$` is the end of the text, `.` no newline).
_UUID = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
                   r"[0-9a-fA-F]{12}")
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|"
                     r"[A-Za-z0-9+/]{4})")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))")


def _matches(pattern: str) -> Callable[[str], bool]:
    compiled = re.compile(pattern)
    return lambda value: compiled.fullmatch(value) is not None


_is_label, _is_subdomain = _matches(_LABEL), _matches(_SUBDOMAIN)
_is_label_1035, _is_key, _is_value = _matches(_LABEL_1035), _matches(_KEY), _matches(_VALUE)


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    """apimachinery's RegexError (with its double space before "or")."""
    if not examples:
        return f"{message} (regex used for validation is '{pattern}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def _too_long(value: str, limit: int, unit: str = "characters") -> list[str]:
    # Go's len() counts bytes.
    return [f"must be no more than {limit} {unit}"] if len(value.encode()) > limit else []


def _dns1123_label(value: str) -> list[str]:
    """apimachinery ``IsDNS1123Label``."""
    errors = _too_long(value, 63)
    if not _is_label(value):
        errors.append("must not contain dots" if _is_subdomain(value) else
                      _regex_error(_LABEL_MESSAGE, _LABEL, "my-name", "123-abc"))
    return errors


def _dns1123_subdomain(value: str, unit: str = "characters") -> list[str]:
    """apimachinery ``IsDNS1123Subdomain`` (``content``'s counts "bytes")."""
    errors = _too_long(value, 253, unit)
    if not _is_subdomain(value):
        errors.append(_regex_error(_SUBDOMAIN_MESSAGE, _SUBDOMAIN, "example.com"))
    return errors


def _dns1035_label(value: str) -> list[str]:
    errors = _too_long(value, 63)
    if not _is_label_1035(value):
        errors.append(_regex_error(_LABEL_1035_MESSAGE, _LABEL_1035, "my-name", "abc-123"))
    return errors


def _qualified_name(value: str) -> list[str]:
    """``content.IsLabelKey`` (1.35 on: "bytes", "a valid label key")."""
    errors: list[str] = []
    parts = value.split("/")
    key = _regex_error(_KEY_MESSAGE, _KEY, "MyName", "my.name", "123-abc")
    if len(parts) > 2:
        return [f"a valid label key {key} with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            errors.append("prefix part must be non-empty")
        else:
            errors += [f"prefix part {message}"
                       for message in _dns1123_subdomain(parts[0], "bytes")]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errors.append("name part must be no more than 63 bytes")
    if not _is_key(name):
        errors.append(f"name part {key}")
    return errors


def _label_value(value: str) -> list[str]:
    """``content.IsLabelValue``."""
    errors = _too_long(value, 63, "bytes")
    if not _is_value(value):
        errors.append(_regex_error(_VALUE_MESSAGE, _VALUE, "MyValue", "my_value", "12345"))
    return errors


def _prefix(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """A name that generateName extends: pkg/api/validation's maskTrailingDash replaces
    the last *two* characters of a name ending in "-" with "a" (as upstream does)."""
    def validate_prefix(value: str) -> list[str]:
        if len(value.encode()) > 1 and value.endswith("-"):
            value = value.encode()[:-2].decode("utf-8", "replace") + "a"
        return check(value)
    return validate_prefix


def _is_date(value: str) -> bool:
    """Go's ``time.Parse("2006-01-02", s)``: four-digit year, two-digit month and day,
    the day within the month (leap years included)."""
    match = _DATE.fullmatch(value)
    if match is None:
        return False
    year, month, day = (int(part) for part in match.groups())
    if not 1 <= month <= 12:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    return 1 <= day <= days


def _is_datetime(value: str) -> bool:
    """strfmt's IsDateTime: the text lower-cased and split at every "t"; the first part a
    date, the second (any later ones are not read) a time with hours up to 23 and minutes
    and seconds up to 59 by text comparison, as upstream."""
    if len(value.encode()) < 4:
        return False
    parts = value.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    match = _TIME.fullmatch(parts[1])
    return match is not None and match[1] <= "23" and match[2] <= "59" and match[3] <= "59"


def _check(test: Callable[[str], bool], message: str) -> Callable[[str], list[str]]:
    return lambda value: [] if test(value) else [message]


def _uri(value: str) -> list[str]:
    problem = request_uri_error(value)
    return [] if problem is None else [problem]


#: The formats by the name ``format.named`` takes: (upstream's ``Name``, the validation).
NAMES: dict[str, tuple[str, Callable[[str], list[str]]]] = {
    "dns1123Label": ("DNS1123Label", _dns1123_label),
    "dns1123Subdomain": ("DNS1123Subdomain", _dns1123_subdomain),
    "dns1035Label": ("DNS1035Label", _dns1035_label),
    "qualifiedName": ("QualifiedName", _qualified_name),
    "dns1123LabelPrefix": ("DNS1123LabelPrefix", _prefix(_dns1123_label)),
    "dns1123SubdomainPrefix": ("DNS1123SubdomainPrefix", _prefix(_dns1123_subdomain)),
    "dns1035LabelPrefix": ("DNS1035LabelPrefix", _prefix(_dns1035_label)),
    "labelValue": ("LabelValue", _label_value),
    "uri": ("URI", _uri),
    "uuid": ("uuid", _check(lambda v: _UUID.fullmatch(v) is not None,
                            "does not match the UUID format")),
    "byte": ("byte", _check(lambda v: _BASE64.fullmatch(v) is not None, "invalid base64")),
    "date": ("date", _check(_is_date, "invalid date")),
    "datetime": ("datetime", _check(_is_datetime, "invalid datetime")),
}
_BY_NAME = {name: check for name, check in NAMES.values()}


def validate(format_name: str, value: str) -> list[str]:
    """The messages of format ``format_name`` (upstream's ``Name``, the value's text) for
    ``value``; empty when it is valid.

    Raises:
        KeyError: no such format (values of the type are only ever made from NAMES).
    """
    return _BY_NAME[format_name](value)


def _named(name: str) -> dict[str, str]:
    return {OPTIONAL_KEY: NAMES[name][0]} if name in NAMES else {}


def _validation(format_name: str, value: str) -> dict[str, list[str]]:
    messages = validate(format_name, value)
    return {OPTIONAL_KEY: messages} if messages else {}


def optional_calls(source: str) -> tuple[str, list[int]]:
    """``source`` with ``[?""]`` after each call of ``validate`` and ``format.named``, so
    that the adapter's map results read as upstream's optionals; and the offsets (in the
    new text) where the inserted text starts, to map an error's column back.

    Returns:
        (the new source, the insertion offsets in increasing order).
    """
    if "validate" not in source and "named" not in source:
        return source, []  # most selectors: no tokenizing (it costs about 0.1 ms)
    tokens = tokenize(source)
    ends: list[int] = []
    for index in range(len(tokens)):
        texts = [t.text for t in tokens[index : index + 3]]
        named = texts == ["format", ".", "named"] and (index == 0
                                                       or tokens[index - 1].text != ".")
        if texts[:2] == [".", "validate"] or named:
            opening = index + (3 if named else 2)
            if opening < len(tokens) and tokens[opening].text == "(":
                end = _closing(tokens, opening)
                if end is not None:
                    ends.append(end)
    if not ends:
        return source, []
    out, last, offsets = [], 0, []
    for end in sorted(ends):
        out.append(source[last:end])
        offsets.append(sum(len(part) for part in out))
        out.append('[?""]')
        last = end
    out.append(source[last:])
    return "".join(out), offsets


def _closing(tokens: list, opening: int) -> int | None:
    """The source offset just after the ``)`` matching the ``(`` at ``tokens[opening]``."""
    depth = 0
    for token in tokens[opening:]:
        if token.text in ("(", "[", "{"):
            depth += 1
        elif token.text in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return token.start + len(token.text)
    return None


def _format_function(name: str) -> Overload:
    return Overload(f"format.{name}", f"format.{name}", (), FORMAT, False,
                    lambda upstream=NAMES[name][0]: upstream)


#: Every overload of the library (``kubernetes.format``), with the adapter's map results.
FUNCTIONS: tuple[Overload, ...] = (
    Overload("format.named", "format-named", ("string",), NAMED, False, _named),
    Overload("validate", "format-validate", (FORMAT, "string"), VALIDATION, True, _validation),
    *(_format_function(name) for name in NAMES),
)


def original_position(rewritten: str, offsets: list[int], line: int,
                      column: int) -> tuple[int, int]:
    """The (line, column), 1-based, in the source :func:`optional_calls` rewrote of a
    position in its result (one inside an inserted ``[?""]`` maps to where it was put).

    Returns:
        (line, column) in the original source.
    """
    lines = rewritten.split("\n")
    at = sum(len(text) + 1 for text in lines[: line - 1]) + column - 1
    before = _without(rewritten[:at], offsets)
    return before.count("\n") + 1, len(before) - before.rfind("\n")


def _without(prefix: str, offsets: list[int]) -> str:
    """``prefix`` of a rewritten source without the inserted texts in it."""
    parts, last = [], 0
    for offset in offsets:
        if offset >= len(prefix):
            break
        parts.append(prefix[last:offset])
        last = offset + 5
    parts.append(prefix[last:] if last <= len(prefix) else "")
    return "".join(parts)
