"""Kubernetes' CEL quantity and semver libraries, independent of the CEL library underneath.

resource.k8s.io/v1 selectors use ``k8s.io/apiserver/pkg/cel/library`` (quantity.go,
semverlib.go): ``kubernetes.Quantity`` and ``kubernetes.Semver`` are opaque types with member
functions and *no* operator overloads. Here a value of either type is its canonical text, so
that equal values have equal text (the adapter compares opaque values by that text, which is
how Kubernetes' ``Equal`` behaves: ``quantity("200M") == quantity("0.2G")``, and semver
equality ignores build metadata):

- a quantity: ``str(Quantity)`` of its exact value (``1Ki`` for ``1024`` and ``1Ki``);
- a version: major.minor.patch[-prerelease], build metadata dropped (it never affects
  precedence, and no function reads it).

A quantity text may carry its upstream form (``_qform.Formed``), which ``isInteger``,
``asInteger``, ``asApproximateFloat`` and ``add``/``sub`` read and make; a bare text is
taken as written.

:data:`FUNCTIONS` lists every overload with its parameter and result kinds ("string",
"bool", "int", "double", "quantity", "semver"); implementations take and return texts for the
two opaque kinds and raise ValueError for a run-time error. ``docs/cel.md`` ("resource.k8s.io/v1
device selectors") lists where this departs from Kubernetes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import semver

from allocation.engine.cel import _qform
from allocation.engine.quantity import Quantity
from allocation.engine.versions import parse_strict_version

__all__ = ["QUANTITY", "SEMVER", "Overload", "FUNCTIONS", "quantity_text", "semver_text",
           "EXTENSIONS", "accepts", "capacity_text"]

QUANTITY = "quantity"
SEMVER = "semver"
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_NANO = Fraction(1, 10**9)

#: The standard CEL extensions of the device environment (the CEL library's names):
#: (name, version, the (major, minor) release whose API server added it or None for none,
#: the identifiers a use of it names: its functions, namespaces and macros, only for those
#: Kubernetes lacks in some release; cel-go ext/lists.go and ext/regex.go). Read from
#: k8s.io/apiserver pkg/cel/environment/base.go v0.34.9, v0.35.6, v0.36.2 (the same list in
#: all three) and dynamic-resource-allocation cel/compile.go (bindings); a new expression
#: gets only those added by the API server's compatibility version (docs/cel.md
#: "Environments by release"). Kubernetes' own libraries are not listed: URL, lists and
#: regex (1.0, ``_url``, ``_lists``, ``_regex``), quantity (1.28), IP and CIDR (1.30,
#: ``_net``), format (1.31, ``_format``) and semver (1.33) predate every supported
#: compatibility version (1.33 on), so every environment has them.
EXTENSIONS: tuple[tuple[str, int | None, tuple[int, int] | None, tuple[str, ...]], ...] = (
    ("bindings", None, (1, 31), ()),
    ("optional", None, (1, 28), ()),
    ("strings", 2, (1, 29), ()),
    ("sets", None, (1, 29), ()),
    ("lists", None, (1, 34),
     ("slice", "flatten", "sort", "sortBy", "lists", "reverse", "distinct")),
    ("two-var-comprehensions", None, (1, 32), ()),
    ("regex", None, None, ("regex",)),  # cel-go's ext.Regex (regex.extract ...): in none
)


@dataclass(frozen=True, slots=True)
class Overload:
    """One overload of a library function: ``params`` include the receiver of a member."""

    function: str
    overload_id: str
    params: tuple[str, ...]
    result: str
    member: bool
    impl: Callable[..., object]


@lru_cache(maxsize=4096)
def _parse_quantity(text: str) -> Quantity:
    """Kubernetes' ``resource.ParseQuantity`` as a value: values finer than 1n round up (away
    from zero) to 1n, binary-suffixed values are capped at int64's largest magnitude."""
    quantity = Quantity.parse(text)
    value = quantity.value
    if (value / _NANO).denominator != 1:
        magnitude = math.ceil(abs(value) / _NANO) * _NANO
        value = magnitude if value > 0 else -magnitude
    if text.endswith("i") and abs(value) > _INT64_MAX:
        value = Fraction(_INT64_MAX if value > 0 else -_INT64_MAX)
    return quantity if value == quantity.value else Quantity(value)


@lru_cache(maxsize=4096)
def _quantity(text: str) -> Quantity:
    """The value of a canonical quantity text (as made by :func:`quantity_text`)."""
    return Quantity.parse(text)


def quantity_text(text: str) -> str:
    """The canonical text of the quantity ``s``; ValueError when it is not a quantity."""
    return str(_parse_quantity(text))


def capacity_text(text: str) -> str:
    """The canonical text of a device capacity written as ``text``, as the scheduler reads it
    back from storage (``_qform.stored``); ValueError when it is not a quantity. Storing
    keeps the value except past 1e21 in DecimalSI, where Go writes no suffix."""
    quantity = _parse_quantity(text)
    value = quantity.value  # integer arithmetic: Fraction's comparisons are slow
    if abs(value.numerator) < 10**21 * value.denominator:
        return str(quantity)
    return str(Quantity(_qform.stored(text)[0]))


@lru_cache(maxsize=4096)
def _quantity_literal(text: str) -> _qform.Formed:
    """``quantity(s)``: the canonical text with the form ParseQuantity gives ``s``
    (``_qform``, worked out only when asked for)."""
    return _qform.Formed(quantity_text(text), source=text)


def _form(text: str) -> _qform.Form:
    """The form a quantity text carries; a bare text (an environment without forms, where
    no function that sees them is called) is taken as written."""
    form = getattr(text, "form", None)
    return _qform.parse(text)[1] if form is None else form


@lru_cache(maxsize=4096)
def semver_text(text: str, normalize: bool = False) -> str:
    """``semver(s[, normalize])``: the canonical text of ``s`` (strict semver 2.0.0 unless
    ``normalize``); ValueError when it is not a version."""
    version = parse_strict_version(text, normalize)
    return str(version.replace(build=None))


@lru_cache(maxsize=4096)
def _version(text: str) -> semver.Version:
    return semver.Version.parse(text)


def accepts(parse: Callable[..., object]) -> Callable[..., bool]:
    """A library's ``is...`` test of ``parse`` (``isQuantity``, ``isSemver``, ``isIP``, ...):
    whether it takes the arguments without a ValueError."""
    def test(*args: object) -> bool:
        try:
            parse(*args)
        except ValueError:
            return False
        return True
    return test


def _compare_quantities(left: str, right: str) -> int:
    a, b = _quantity(left), _quantity(right)
    return (a > b) - (a < b)


def _compare_versions(left: str, right: str) -> int:
    return _version(left).compare(_version(right))


def _int64(text: str) -> int | None:
    """Upstream's ``AsInt64`` of the quantity (``_qform``: it depends on the form)."""
    return _qform.as_int64(_quantity(text).value, _form(text))


def _as_integer(text: str) -> int:
    number = _int64(text)
    if number is None:
        raise ValueError("cannot convert value to integer")
    return number


def _as_float(text: str) -> float:
    return _qform.approximate_float(_quantity(text).value, _form(text))


def _sign(text: str) -> int:
    value = _quantity(text).value
    return (value > 0) - (value < 0)


def _arithmetic(sign: int) -> Callable[[str, object], str]:
    """``add``/``sub`` of a quantity or an int (upstream: ``NewQuantity(i,
    DecimalExponent)``, an int64 at scale 0), with the result's form."""
    def apply(left: str, right: object) -> str:
        if isinstance(right, str):
            other = _qform.Formed(right, _form(right))
        else:
            other = _qform.Formed(str(Quantity(right)), _qform.Form(False, 0))
        return _qform.add(_qform.Formed(left, _form(left)), other, negate=sign < 0)
    return apply


def _component(name: str) -> Callable[[str], int]:
    def get(text: str) -> int:
        number = getattr(_version(text), name)
        # Go converts the uint64 component to int64: large values wrap, as upstream.
        return number - 2**64 if number > _INT64_MAX else number
    return get


def _quantity_overloads() -> list[Overload]:
    q, add, sub = QUANTITY, _arithmetic(1), _arithmetic(-1)
    return [
        Overload("quantity", "string_to_quantity", ("string",), q, False, _quantity_literal),
        Overload("isQuantity", "is_quantity_string", ("string",), "bool", False,
                 accepts(quantity_text)),
        # Upstream declares sign as a global function (cel.Overload), so it is sign(q), not
        # q.sign(), whatever its documentation says.
        Overload("sign", "quantity_sign", (q,), "int", False, _sign),
        Overload("isGreaterThan", "quantity_is_greater_than", (q, q), "bool", True,
                 lambda a, b: _compare_quantities(a, b) > 0),
        Overload("isLessThan", "quantity_is_less_than", (q, q), "bool", True,
                 lambda a, b: _compare_quantities(a, b) < 0),
        Overload("compareTo", "quantity_compare_to", (q, q), "int", True, _compare_quantities),
        Overload("asApproximateFloat", "quantity_get_float", (q,), "double", True, _as_float),
        Overload("asInteger", "quantity_get_int", (q,), "int", True, _as_integer),
        Overload("isInteger", "quantity_is_integer", (q,), "bool", True,
                 lambda a: _int64(a) is not None),
        Overload("add", "quantity_add", (q, q), q, True, add),
        Overload("add", "quantity_add_int", (q, "int"), q, True, add),
        Overload("sub", "quantity_sub", (q, q), q, True, sub),
        Overload("sub", "quantity_sub_int", (q, "int"), q, True, sub),
    ]


def _semver_overloads() -> list[Overload]:
    v = SEMVER
    return [
        Overload("semver", "string_to_semver", ("string",), v, False, semver_text),
        Overload("semver", "string_bool_to_semver", ("string", "bool"), v, False, semver_text),
        Overload("isSemver", "is_semver_string", ("string",), "bool", False, accepts(semver_text)),
        Overload("isSemver", "is_semver_string_bool", ("string", "bool"), "bool", False,
                 accepts(semver_text)),
        Overload("isGreaterThan", "semver_is_greater_than", (v, v), "bool", True,
                 lambda a, b: _compare_versions(a, b) > 0),
        Overload("isLessThan", "semver_is_less_than", (v, v), "bool", True,
                 lambda a, b: _compare_versions(a, b) < 0),
        Overload("compareTo", "semver_compare_to", (v, v), "int", True, _compare_versions),
        Overload("major", "semver_major", (v,), "int", True, _component("major")),
        Overload("minor", "semver_minor", (v,), "int", True, _component("minor")),
        Overload("patch", "semver_patch", (v,), "int", True, _component("patch")),
    ]


#: Every overload of both libraries.
FUNCTIONS: tuple[Overload, ...] = (*_quantity_overloads(), *_semver_overloads())
