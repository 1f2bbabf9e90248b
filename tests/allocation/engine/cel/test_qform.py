"""Quantity forms (``_qform``): what upstream's isInteger, asInteger, asApproximateFloat and
add/sub give, which depends on how ``resource.Quantity`` holds the value.

Every CEL case below was checked against the real upstream library (celhar 0.34.9, 0.35.6
and 0.36.2: cel-go v0.26.0 with apimachinery and apiserver of those tags); the tables of
``_qform`` functions are transcribed from apimachinery's own tests
(``pkg/api/resource/quantity_test.go``, ``amount_test.go``).
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from allocation.engine.cel import _k8s, _qform, compile_device_selector
from allocation.engine.cel._errors import CelEvaluationError
from allocation.engine.cel._library import compile_device_program
from allocation.engine.cel._opaque import FORM_FIELD
from allocation.engine.cel._qform import Form
from allocation.engine.quantity import Quantity

_MAX = 2**63 - 1


def _run(expression: str) -> object:
    ok, value = compile_device_program(expression, True).run({})
    return value if ok else ("error", value)


# k8s.io/apiserver pkg/cel/library/quantity_test.go (TestQuantity), the cases whose results
# depend on the form.
_UPSTREAM = [
    ('quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
    ('quantity("50k").add(20).isLessThan(quantity("50020"))', False),
    ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', True),
    ('quantity("50k").sub(20) == quantity("49980")', True),
    ('quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20),
    ('quantity("50k").asInteger()', 50000),
    ('quantity("9999999999999999999999999999999999999G").asInteger()',
     ("error", "cannot convert value to integer")),
    ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
    ('quantity("50").isInteger()', True),
    ('quantity("50.703k").asApproximateFloat()', 50703.0),
]

# One case per branch of the model.
_FORMS = [
    # the fast path: an int64 and a scale; a negative scale is never an integer
    ('quantity("1000m").isInteger()', False),
    ('quantity("1000m").asInteger()', ("error", "cannot convert value to integer")),
    ('quantity("1").isInteger()', True),
    ('quantity("1") == quantity("1000m")', True),  # equality stays the value's
    ('[quantity("1")] == [quantity("1000m")] && quantity("1") in [quantity("1000m")]', True),
    ('quantity("1e3").asInteger()', 1000),  # positive scale, no overflow
    ('quantity("1E18").asInteger()', 10**18),
    ('quantity("10E18").isInteger()', False),  # positive scale, overflow
    ('quantity("9223372036854775807").isInteger()', False),  # 19 digits: inf.Dec
    ('quantity("922337203685477580").asInteger()', 922337203685477580),  # 18 digits
    ('quantity("9223372036854775808").isInteger()', False),
    ('quantity("-1500m").asApproximateFloat()', -1.5),
    ('quantity("-5").asInteger()', -5),
    # 12 * Pow10(-1), not 1.2; 1.1 happens to round to 1.1
    ('quantity("1.2").asApproximateFloat()', 1.2000000000000002),
    ('quantity("1.1").asApproximateFloat()', 1.1),
    ('quantity("0.000000001").isInteger()', False),
    ('quantity("0.1n").asApproximateFloat()', 1e-09),  # rounded up to 1n, an inf.Dec
    ('quantity("0.1n") == quantity("1n")', True),
    ('quantity("0e400").asApproximateFloat()', ("nan",)),  # 0 * Pow10(400) = 0 * +Inf
    ('quantity("0e400").isInteger()', True),
    ('quantity("0.0").isInteger()', False),  # zero at scale -1
    # binary suffixes: the fast path only while 15 digits suffice
    ('quantity("1Ti").isInteger()', True),
    ('quantity("100Ti").isInteger()', False),
    ('quantity("100Ti").asApproximateFloat()', 109951162777600.0),
    ('quantity("1Ei").isInteger()', False),
    ('quantity("8Ei").asApproximateFloat()', 9.223372036854776e18),  # capped at 2^63-1
    ('quantity("8Ei") == quantity("9223372036854775807")', True),
    ('quantity("1.5Ki").isInteger()', False),
    # add/sub: int64 at the smaller scale, inf.Dec on overflow or with an inf.Dec
    ('quantity("500m").add(quantity("500m")).isInteger()', False),
    ('quantity("500m").add(quantity("500m")) == quantity("1")', True),
    ('quantity("1.5").add(quantity("0.5")).asApproximateFloat()', 2.0),
    ('quantity("1").add(quantity("0")).isInteger()', True),
    ('quantity("0").add(quantity("1000m")).isInteger()', False),  # takes the other's form
    ('quantity("2").sub(quantity("1500m")).asApproximateFloat()', 0.5),
    ('quantity("1k").sub(quantity("1")).asInteger()', 999),  # mixed scales, 3 and 0
    ('quantity("4Ei").add(quantity("4Ei")).isInteger()', False),  # int64 overflow: inf.Dec
    ('quantity("4Ei").add(quantity("4Ei")).sub(quantity("4Ei")).isInteger()', False),
    ('quantity("9223372036854775807").sub(quantity("9223372036854775807")).isInteger()',
     False),
    ('quantity("1e300").add(1).isInteger()', False),
    ('quantity("1").add(-1).sub(quantity("1e3")).asInteger()', -1000),
    ('quantity("100Ti").sub(quantity("100Ti")).isInteger()', False),
    # Go negates the int64 before adding: -(-2^63) wraps to -2^63
    ('quantity("1").sub(-9223372036854775808).compareTo(quantity("0"))', -1),
    ('quantity("1").sub(-9223372036854775807).isInteger()', False),
]


# Forms travel with the values through lists, maps, optionals, dyn, bindings and loops.
_CARRIED = [
    ('[quantity("1000m"), quantity("1")].map(q, q.isInteger())', [False, True]),
    ('cel.bind(x, quantity("1.5"), x.add(x).isInteger())', False),
    ('optional.of(quantity("1000m")).value().isInteger()', False),
    ('{"a": quantity("1000m")}["a"].isInteger()', False),
    ('dyn(quantity("1000m")).isInteger()', False),
    ('[quantity("1000m")].all(q, q == quantity("1"))', True),
    ('[quantity("100Ti"), quantity("109951162777600")].filter(q, q.isInteger()).size()', 1),
    ('sign(quantity("-1000m").add(1)) == 0 && !quantity("-1000m").add(1).isInteger()', True),
]


@pytest.mark.parametrize(("expression", "expected"), _UPSTREAM + _FORMS + _CARRIED)
def test_form_dependent_functions_give_what_upstream_gives(expression, expected):
    got = _run(expression)
    if expected == ("nan",):
        assert isinstance(got, float) and math.isnan(got)
    else:
        assert got == expected and type(got) is type(expected)


def _capacity(expression: str, **values: str) -> bool:
    selector = compile_device_selector(expression)
    return selector.matches("d", {"capacity": {k: {"value": v} for k, v in values.items()}})


def test_a_capacity_has_the_form_of_what_the_api_server_stored():
    # "1000m" is stored as "1": an int64 at scale 0 for the scheduler
    assert _capacity('device.capacity["d"].a.isInteger()', a="1000m")
    assert _capacity('device.capacity["d"].a.asInteger() == 1', a="1000m")
    # "100Ti" is stored as written, an inf.Dec; the same value in decimal is an int64
    assert _capacity('device.capacity["d"].a == device.capacity["d"].b && '
                     '!device.capacity["d"].a.isInteger() && device.capacity["d"].b.isInteger()',
                     a="100Ti", b="109951162777600")
    # "1.2" is stored as "1200m": 1200 * Pow10(-3)
    assert _capacity('device.capacity["d"].a.asApproximateFloat() == 1.2', a="1.2")
    # no SI suffix past E: "1000E" is stored as "1"
    assert _capacity('device.capacity["d"].a.asInteger() == 1', a="1000E")
    # a selector without form functions compares values as before, the stored ones
    assert _capacity('device.capacity["d"].a.compareTo(quantity("1")) == 0', a="1000m")
    assert _capacity('device.capacity["d"].a == quantity("1")', a="1000E")
    assert _capacity('device.capacity["d"].a == quantity("1500m")', a="1.5")
    with pytest.raises(CelEvaluationError, match="cannot convert value to integer"):
        _capacity('device.capacity["d"].a.asInteger() == 1', a="100Ti")


@pytest.mark.parametrize(("text", "serialized"), [
    ("1000m", "1"), ("1.2", "1200m"), ("+1", "+1"), ("1E18", "1E18"), ("100Ti", "100Ti"),
    ("1536Mi", "1536Mi"), ("1.5Gi", "1536Mi"), ("8Ei", "9223372036854775807"), ("0", "0"),
    ("0.1n", "1n"), ("1000E", "1"), ("12e6", "12e6"), ("12000e3", "12e6"), ("0.5Ki", "512"),
])
def test_the_stored_text_is_quantity_string(text, serialized):
    # Quantity.String(): the text itself when ParseQuantity kept it, else canonical
    assert _qform._serialized(text) == serialized


def test_only_expressions_naming_a_form_function_carry_forms():
    assert not compile_device_program('quantity("1").compareTo(quantity("2")) < 0', True
                                      ).quantity_forms
    assert compile_device_program('quantity("1").isInteger()', True).quantity_forms
    assert _qform.uses_forms("q.add(1)") and not _qform.uses_forms("q.adder(1)")
    ok, value = compile_device_program('quantity("1").add(1)', True).run({})
    assert ok and len(getattr(value, FORM_FIELD)) == _qform.FORM_BITS


@pytest.mark.parametrize("form", [Form(False, 0), Form(True, 9), Form(False, -9),
                                  Form(True, -(2**31)), Form(False, 2**31 - 1), Form(True, -1)])
def test_a_form_survives_its_encoding(form):
    floats = _qform.encode(form)
    assert all(item == 0.0 for item in floats)  # every float equals every other
    assert _qform.decode(floats) == form


@pytest.mark.parametrize("text", ["1", "1000m", "100Ti", "8Ei", "-0.1n", "0.0", "1e-12",
                                  "12345678901234567890", "1.5Ki", "+.5", "1.", "-00.010e3"])
def test_parsed_values_are_the_planners(text):
    value, _form, _fmt = _qform.parse(text)
    assert value == _k8s._parse_quantity(text).value


def _dec(number: int, exponent: int) -> tuple[Fraction, Form]:
    """apimachinery's test helper decQuantity: an inf.Dec of number * 10**exponent."""
    return Fraction(number) * Fraction(10) ** exponent, Form(True, -exponent)


# apimachinery quantity_test.go TestQuantityAsApproximateFloat64 (the BinarySI and
# DecimalExponent rows repeat the DecimalSI ones: the format does not matter).
@pytest.mark.parametrize(("held", "expected"), [
    (_dec(0, 0), 0.0), (_dec(1, 0), 1.0), (_dec(1024, 0), 1024.0),
    (_dec(7 * 1024 * 1024, 1), 7 * 1024 * 1024 * 10.0),
    (_dec(7 * 1024 * 1024, 8), 7 * 1024 * 1024 * 100000000.0),
    (_dec(7 * 1024 * 1024, -1), 7 * 1024 * 1024 * 0.1),  # Pow10(-1) is 1/10, rounded
    (_dec(7 * 1024 * 1024, -8), 7 * 1024 * 1024 / 100000000.0),
    ((Fraction(_MAX), Form(True, 0)), float(_MAX)), (_dec(12, 18), 1.2e19),
    (_dec(12, 500), math.inf), (_dec(-12, 500), -math.inf),
])
def test_approximate_float_is_gos(held, expected):
    assert _qform.approximate_float(*held) == expected


# amount_test.go TestInt64AmountAsInt64: (int64, scale) -> AsInt64
@pytest.mark.parametrize(("number", "scale", "expected"), [
    (100, 0, 100), (100, 1, 1000), (100, -5, None), (100, 100, None)])
def test_as_int64_is_gos(number, scale, expected):
    value = Fraction(number) * Fraction(10) ** scale
    assert _qform.as_int64(value, Form(False, scale)) == expected


# amount_test.go TestInt64AmountAdd: int64 forms; on overflow Quantity.Add goes to inf.Dec
@pytest.mark.parametrize(("a", "b", "expected"), [
    ((100, 1), (10, 2), Form(False, 1)), ((100, 1), (1, 2), Form(False, 1)),
    ((100, 1), (1, 100), Form(True, -1)), ((-5, 2), (50, 1), Form(False, 1)),
    ((-5, 2), (5, 2), Form(False, 2)), ((_MAX, -1), (1, -1), Form(True, 1)),
    ((_MAX, -1), (0, -1), Form(False, -1)), ((_MAX // 10, 1), (10, 0), Form(True, 0)),
])
def test_add_keeps_int64_forms_until_they_overflow(a, b, expected):
    def formed(number: int, scale: int) -> _qform.Formed:
        value = Fraction(number) * Fraction(10) ** scale
        return _qform.Formed(str(Quantity(value)), Form(False, scale))

    assert _qform.add(formed(*a), formed(*b)).form == expected
    assert _qform.add(formed(*b), formed(*a)).form == expected
