"""The internal form of Kubernetes' ``resource.Quantity``, which some quantity functions see.

Equality and ordering of quantities depend only on their values (``Cmp``), but upstream's
``isInteger``, ``asInteger``, ``asApproximateFloat`` and the results of ``add``/``sub``
depend on how the value is held (k8s.io/apimachinery ``pkg/api/resource/quantity.go``,
``amount.go``, ``math.go``, the same at v0.35.6 and v0.36.2): an ``int64Amount`` (an
int64 times ``10**scale``) or an ``inf.Dec`` (a big integer times ``10**-scale``).
``quantity("1000m").isInteger()`` is false (1000 at scale -3), ``quantity("100Ti")`` is an
``inf.Dec`` (too many digits for the fast path) so it is not an integer either, and
``quantity("1.2").asApproximateFloat()`` is ``12 * Pow10(-1)``, 1.2000000000000002.

A :class:`Form` is (big, scale); with the exact value it determines the held number, so a
quantity is its canonical value text plus a Form. :class:`Formed` is that text carrying its
form, what the library's functions take and return. The form travels through CEL in an
equality-neutral way (``_library``): the opaque message's second field is 33 floats whose
signs are the form's bits, all ``0.0`` or ``-0.0``; CEL compares them numerically
(``-0.0 == 0.0``), so message equality is still the value's. Only an expression that names
one of :data:`FORM_FUNCTIONS` can see a form (:func:`uses_forms`); the others get messages
without it, as fast as before.

Not modelled: upstream's ``add``/``sub`` copy the receiver shallowly, so on an ``inf.Dec``
receiver they also change the receiver itself (``cel.bind(x, quantity("100Ti"),
x.add(1).compareTo(x))`` is 0 upstream), and for a device capacity that change outlives the
evaluation. docs/cel.md ("Quantity forms") says how this was compared with upstream.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

from allocation.engine.quantity import (
    BINARY_EXPONENTS,
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_EXPONENTS,
    DECIMAL_SI,
    Quantity,
    go_quantity_text,
)

__all__ = ["Form", "Formed", "FORM_FUNCTIONS", "uses_forms", "parse", "stored", "as_int64",
           "approximate_float", "add", "FORM_BITS", "encode", "decode"]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_NUMBER = re.compile(r"([+-]?)(0*)([0-9]*)(?:\.([0-9]*))?")
#: The functions whose results depend on a quantity's form.
FORM_FUNCTIONS = ("isInteger", "asInteger", "asApproximateFloat", "add", "sub")
_NAMES_FORM = re.compile(r"\b(?:" + "|".join(FORM_FUNCTIONS) + r")\b")
#: How many floats carry a form: one for ``big``, 32 for the scale (an int32 upstream).
FORM_BITS = 33


class Form(NamedTuple):
    """How upstream holds a quantity: ``big`` False, an int64 times ``10**scale``; True, an
    ``inf.Dec``, a big integer times ``10**-scale``."""

    big: bool
    scale: int


class Formed(str):
    """A quantity's canonical value text (equal values, equal texts) with its :class:`Form`,
    given or, with ``source``, that of ParseQuantity(source) when first asked for (an
    expression without form functions never asks)."""

    def __new__(cls, text: str, form: Form | None = None, source: str | None = None
                ) -> Formed:
        made = super().__new__(cls, text)
        made._form, made._source = form, source
        return made

    @property
    def form(self) -> Form:
        """The form."""
        if self._form is None:
            self._form = parse(self._source)[1]
        return self._form


def uses_forms(source: str) -> bool:
    """Whether a CEL expression may call a function that sees forms (a word search, string
    literals included: a false positive only costs speed)."""
    return _NAMES_FORM.search(source) is not None


def _number(value: Fraction, form: Form) -> int:
    """The held integer: the int64 or the ``inf.Dec``'s unscaled value."""
    scaled = value * Fraction(10) ** (form.scale if form.big else -form.scale)
    if scaled.denominator != 1:  # pragma: no cover - forms are made to fit their values
        raise AssertionError(f"{value} does not fit {form}")
    return scaled.numerator


@lru_cache(maxsize=4096)
def parse(text: str) -> tuple[Fraction, Form, str]:
    """``resource.ParseQuantity(text)``: (value, form, format) of a quantity text that the
    planner's parser accepts (``_k8s.quantity_text`` reports the errors).

    Returns:
        The value after upstream's rounding up to 1n and its BinarySI cap, the form (the
        fast path's int64 and scale, else an ``inf.Dec`` at scale 9, or 0 when capped), and
        the format (BinarySI becomes DecimalSI for a value strictly between 0 and 1).
    """
    match = _NUMBER.match(text)
    sign, zeros, digits, denom = match.group(1), match.group(2), match.group(3), match.group(4)
    suffix = text[match.end():]
    num = digits or "0"  # parseQuantityString: leading zeros stripped, "" is "0"
    denom = denom or ""
    if suffix in DECIMAL_EXPONENTS:
        base, exponent, fmt = 10, DECIMAL_EXPONENTS[suffix], DECIMAL_SI
    elif suffix in BINARY_EXPONENTS:
        base, exponent, fmt = 2, BINARY_EXPONENTS[suffix], BINARY_SI
    else:
        base, exponent, fmt = 10, int(suffix[1:]), DECIMAL_EXPONENT
    negative = sign == "-"
    if base == 10:
        scale, precision = exponent, 18 - len(num) - len(denom)
    else:
        scale = 0
        # 15 - len(num) - int32(float32(exponent)*3/10) - 1; exact for exponents 10..60
        precision = 14 - len(num) - exponent * 3 // 10 if not denom else -1
    if precision >= 0 and scale - len(denom) >= -9:
        scale -= len(denom)
        held = int(num + denom) << (exponent if base == 2 else 0)
        held = -held if negative else held
        return Fraction(held) * Fraction(10) ** scale, Form(False, scale), fmt
    # inf.Dec: SetString of the number as written, the suffix folded in, then rounded
    unscaled, dec_scale = int(zeros + digits + denom or "0"), len(denom)
    if base == 10:
        dec_scale -= exponent
    else:
        unscaled <<= exponent
    if unscaled != 0:  # Round(amount, 9, RoundUp): away from zero, to scale 9
        shift = 9 - dec_scale
        unscaled = unscaled * 10**shift if shift >= 0 else -(-unscaled // 10**-shift)
        dec_scale = 9
    if base == 2 and Fraction(unscaled, 10**dec_scale) > _INT64_MAX:
        unscaled, dec_scale = _INT64_MAX, 0
    if base == 2 and 0 < unscaled < 10**dec_scale:
        fmt = DECIMAL_SI
    unscaled = -unscaled if negative else unscaled
    return Fraction(unscaled, 10**dec_scale) if dec_scale >= 0 else \
        Fraction(unscaled * 10**-dec_scale), Form(True, dec_scale), fmt


def _serialized(text: str) -> str:
    """What the API server stores for a quantity written as ``text`` (Quantity.String):
    the text itself when ParseQuantity kept it (the fast path's canonical check), else the
    canonical form of the value in the parsed format."""
    value, form, fmt = parse(text)
    if text == "0":
        return text
    if not form.big:
        shifted = _digits(text)
        # the binary exponents are all multiples of 10
        keep = int(shifted) & 7 != 0 if fmt == BINARY_SI else (
            form.scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0")
        if keep:
            return text
    return go_quantity_text(value, fmt)


def _digits(text: str) -> str:
    """parseQuantityString's ``num + denom``: the digits without leading zeros, "0" if none
    before the point."""
    match = _NUMBER.match(text)
    return (match.group(3) or "0") + (match.group(4) or "")


@lru_cache(maxsize=4096)
def stored(text: str) -> tuple[Fraction, Form]:
    """(value, form) of a device capacity written as ``text``, as the scheduler sees it: it
    reads the ResourceSlice the API server stored, i.e. ParseQuantity of the serialised
    quantity, not of what the driver wrote (``1000m`` is stored as ``1``, an integer)."""
    value, form, _fmt = parse(_serialized(text))
    return value, form


def as_int64(value: Fraction, form: Form) -> int | None:
    """``Quantity.AsInt64``: the value when it is held as an int64 at scale 0, or at a
    positive scale without overflow; None otherwise (negative scale, ``inf.Dec``)."""
    if form.big or form.scale < 0:
        return None
    number = _number(value, form) * 10**form.scale
    return number if _INT64_MIN <= number <= _INT64_MAX else None


# Go's math.Pow10 tables (src/math/pow10.go): exact powers below 1e32, then products.
_POW10 = [float(f"1e{n}") for n in range(32)]
_POS32 = [float(f"1e{n * 32}") for n in range(10)]
_NEG32 = [float(f"1e-{n * 32}") for n in range(11)]


def _pow10(n: int) -> float:
    """Go's ``math.Pow10``, bit for bit."""
    if 0 <= n <= 308:
        return _POS32[n // 32] * _POW10[n % 32]
    if -323 <= n <= 0:
        return _NEG32[-n // 32] / _POW10[-n % 32]
    return math.inf if n > 0 else 0.0


def _float(number: int) -> float:
    """float64 of an integer, nearest-even, infinite beyond the range (big.Float.Float64)."""
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


def approximate_float(value: Fraction, form: Form) -> float:
    """``Quantity.AsApproximateFloat64``: the held number as a float64 times
    ``Pow10(exponent)``, rounded twice as upstream (``1.2`` is 1.2000000000000002)."""
    base = _float(_number(value, form))
    exponent = -form.scale if form.big else form.scale
    return base if exponent == 0 else base * _pow10(exponent)


def _wrap(number: int) -> int:
    """Go's int64 arithmetic wraps."""
    return (number - _INT64_MIN) % 2**64 + _INT64_MIN


def add(left: Formed, right: Formed, negate: bool = False) -> Formed:
    """``Quantity.Add`` (``Sub`` with ``negate``) on a copy of ``left``: two int64 forms stay
    int64 at the smaller scale unless the result overflows; otherwise both become ``inf.Dec``
    at the larger scale. ``Sub`` negates the int64 as Go does (wrapping int64's minimum)."""
    a_value, b_value = _value(str(left)), _value(str(right))
    a, b = left.form, right.form
    if not a.big and not b.big:
        a_held, b_held = _number(a_value, a), _number(b_value, b)
        if negate:
            b_held = _wrap(-b_held)
        held = _int64_add(a_held, a.scale, b_held, b.scale)
        if held is not None:
            text = str(_quantity(Fraction(held[0]) * Fraction(10) ** held[1]))
            return Formed(text, Form(False, held[1]))
    a_scale = a.scale if a.big else -a.scale
    b_scale = b.scale if b.big else -b.scale
    total = a_value - b_value if negate else a_value + b_value
    return Formed(str(_quantity(total)), Form(True, max(a_scale, b_scale)))


def _int64_add(a: int, a_scale: int, b: int, b_scale: int) -> tuple[int, int] | None:
    """``int64Amount.Add``: (held, scale), None on overflow."""
    if b == 0:
        return a, a_scale
    if a == 0:
        return b, b_scale
    low = min(a_scale, b_scale)
    if a_scale > low:
        a *= 10**(a_scale - low)
    elif b_scale > low:
        b *= 10**(b_scale - low)
    if not (_INT64_MIN <= a <= _INT64_MAX and _INT64_MIN <= b <= _INT64_MAX):
        return None
    total = a + b
    return (total, low) if _INT64_MIN <= total <= _INT64_MAX else None


@lru_cache(maxsize=4096)
def _value(text: str) -> Fraction:
    """The value of a canonical value text."""
    return Quantity.parse(text).value


def _quantity(value: Fraction) -> Quantity:
    return Quantity(value)


@lru_cache(maxsize=1024)
def encode(form: Form) -> tuple[float, ...]:
    """The form as :data:`FORM_BITS` floats, each 0.0 or -0.0 (a set bit)."""
    bits = (int(form.big) << 32) | (form.scale & 0xFFFFFFFF)
    return tuple(-0.0 if bits >> (32 - index) & 1 else 0.0 for index in range(FORM_BITS))


def decode(floats: object) -> Form:
    """The form :func:`encode` made."""
    bits = 0
    for item in floats:
        bits = bits << 1 | (math.copysign(1.0, item) < 0)
    scale = bits & 0xFFFFFFFF
    return Form(bool(bits >> 32), scale - 2**32 if scale >= 2**31 else scale)
