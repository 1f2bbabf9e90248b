"""Kubernetes resource quantities (``16Gi``, ``500m``, ``1e3``), parsed exactly."""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache, total_ordering

__all__ = ["Quantity", "QUANTITY_PATTERN", "BINARY_SI", "DECIMAL_SI", "DECIMAL_EXPONENT",
           "quantity_format", "go_quantity_text", "BINARY_EXPONENTS", "DECIMAL_EXPONENTS"]

QUANTITY_PATTERN = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"

_SYNTAX = re.compile(
    r"^(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE](?P<exponent>[+-]?[0-9]+))?$"
)
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
#: The suffixes: binary ones to their power of two, decimal ones to their power of ten.
BINARY_EXPONENTS, DECIMAL_EXPONENTS = _BINARY, _DECIMAL
BINARY_SI, DECIMAL_SI, DECIMAL_EXPONENT = "BinarySI", "DecimalSI", "DecimalExponent"
"""apimachinery's quantity formats: a quantity remembers the one it was parsed in and is
written back in it (``go_quantity_text``)."""
_BINARY_SUFFIXES = ("", *_BINARY)
_DECIMAL_SUFFIXES = {power: name for name, power in _DECIMAL.items()}
_MAX_EXPONENT = 1000  # keeps "1e999999999" from building a gigantic integer


@total_ordering
class Quantity:
    """An immutable, exact Kubernetes quantity; equal values compare and hash equal."""

    __slots__ = ("_value", "_text")

    def __init__(self, value: Fraction | int | str = 0) -> None:
        if isinstance(value, str):
            value = _parse_value(value)
        # A Fraction is immutable: one already made (a parsed text's, from the cache) is
        # kept as it is rather than built again, most of what a parse cost.
        self._value = value if value.__class__ is Fraction else Fraction(value)
        self._text: str | None = None

    @classmethod
    def parse(cls, text: str) -> Quantity:
        """Parse Kubernetes quantity syntax, raising ValueError when ``text`` is not one."""
        return cls(_parse_value(text))

    @property
    def value(self) -> Fraction:
        """The exact value (bytes for memory, cores for cpu)."""
        return self._value

    @property
    def is_integer(self) -> bool:
        """Whether the value is a whole number."""
        return self._value.denominator == 1

    def __add__(self, other: object) -> Quantity:
        if isinstance(other, Quantity):
            return Quantity(self._value + other._value)
        if isinstance(other, int) and not isinstance(other, bool):
            return Quantity(self._value + other)
        return NotImplemented

    __radd__ = __add__

    def __sub__(self, other: object) -> Quantity:
        if isinstance(other, Quantity):
            return Quantity(self._value - other._value)
        if isinstance(other, int) and not isinstance(other, bool):
            return Quantity(self._value - other)
        return NotImplemented

    def __neg__(self) -> Quantity:
        return Quantity(-self._value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self._value == other._value
        return NotImplemented

    def __lt__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self._value < other._value
        return NotImplemented

    def __hash__(self) -> int:
        return hash(("Quantity", self._value))

    def __str__(self) -> str:
        if self._text is None:
            self._text = _format(self._value)
        return self._text

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"


# The forms almost every manifest uses (``8``, ``16Gi``, ``500m``, ``1.5G``), parsed with
# integers: the same value as the general path, without building Fractions from text.
_COMMON = re.compile(r"(-?)([0-9]{1,30})(?:\.([0-9]{1,30}))?(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?")
_COMMON_SCALE = {None: (1, 1), "m": (1, 1000),
                 **{name: (1 << bits, 1) for name, bits in _BINARY.items()},
                 **{name: (10 ** power, 1) for name, power in _DECIMAL.items() if power > 0}}


def _parse_value(text: str) -> Fraction:
    if not isinstance(text, str):
        raise ValueError(f"a quantity must be a string, not {type(text).__name__}")
    return _parse_str(text)


@lru_cache(maxsize=4096)  # a cluster repeats a few quantities thousands of times
def _parse_str(text: str) -> Fraction:
    common = _COMMON.fullmatch(text)
    if common is None:
        return _parse_exact(text)
    sign, whole, fraction, suffix = common.groups()
    numerator, denominator = _COMMON_SCALE[suffix]
    if fraction:
        numerator *= int(whole + fraction)
        denominator *= 10 ** len(fraction)
    else:
        numerator *= int(whole)
    return Fraction(-numerator if sign else numerator, denominator)


def _parse_exact(text: str) -> Fraction:
    """Any quantity syntax, through Fractions (also what ``_parse_str`` is checked against).

    Raises:
        ValueError: ``text`` is not a quantity.
    """
    match = _SYNTAX.match(text)
    if match is None:
        if not text or not re.match(QUANTITY_PATTERN, text):
            raise ValueError(
                f"{_quote(text)} is not a valid quantity: quantities must match the regular "
                f"expression '{QUANTITY_PATTERN}'"
            )
        raise ValueError(f"{_quote(text)} is not a valid quantity")
    number = Fraction(match["number"])
    if match["sign"] == "-":
        number = -number
    suffix, exponent = match["suffix"], match["exponent"]
    if suffix in _BINARY:
        return number * (1 << _BINARY[suffix])
    power = _DECIMAL[suffix or ""] if exponent is None else int(exponent)
    if abs(power) > _MAX_EXPONENT:
        raise ValueError(f"{_quote(text)} is not a valid quantity: exponent out of range")
    return number * Fraction(10) ** power


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _format(value: Fraction) -> str:
    """Canonical text: the shorter of the binary-suffix form (whole multiples of 1Ki only) and
    the decimal SI form, preferring binary on a tie."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    decimal = _format_decimal(magnitude)
    if magnitude.denominator == 1 and magnitude.numerator % 1024 == 0:
        number, suffix = magnitude.numerator, ""
        for name, bits in _BINARY.items():
            if number % (1 << bits) == 0:
                suffix = name
        binary = f"{number >> _BINARY[suffix]}{suffix}"
        if len(binary) <= len(decimal):
            return sign + binary
    return sign + decimal


def _mantissa_exponent(magnitude: Fraction) -> tuple[int, int]:
    """``magnitude`` (> 0, a finite decimal) as mantissa * 10**exponent, the mantissa not
    divisible by 10."""
    exponent = 0
    while magnitude.denominator != 1:
        magnitude *= 10
        exponent -= 1
    mantissa = magnitude.numerator
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    return mantissa, exponent


def _format_decimal(magnitude: Fraction) -> str:
    mantissa, exponent = _mantissa_exponent(magnitude)
    if exponent < -9 or exponent > 21:
        return f"{mantissa}e{exponent}"
    for name, power in sorted(_DECIMAL.items(), key=lambda item: -item[1]):
        if power <= exponent:
            return f"{mantissa * 10 ** (exponent - power)}{name}"
    raise AssertionError("unreachable")  # pragma: no cover


def quantity_format(text) -> str:
    """The format apimachinery's ParseQuantity gives ``text``: BinarySI for a binary
    suffix, DecimalExponent for an ``e``/``E`` exponent, else DecimalSI."""
    text = str(text).strip()
    if text.endswith(_BINARY_SUFFIXES[1:]):
        return BINARY_SI
    if re.search(r"[0-9.][eE][-+]?[0-9]+$", text):
        return DECIMAL_EXPONENT
    return DECIMAL_SI


def go_quantity_text(value: Fraction, fmt: str) -> str:
    """``value`` in apimachinery's canonical form for ``fmt`` (Quantity.String): BinarySI
    as a whole multiple of the largest power of 1024 (below 1024 or fractional: decimal),
    decimal forms as mantissa and an exponent that is a multiple of 3. Unlike ``str()``
    of a Quantity (the planner's shortest form), this is what upstream writes back, e.g.
    in ``consumedCapacity`` (docs/v1.md)."""
    if value == 0:
        return "0"
    sign, value = ("-", -value) if value < 0 else ("", value)
    if fmt == BINARY_SI and value >= 1024 and value.denominator == 1:
        number, power = value.numerator, 0
        while number % 1024 == 0 and power < len(_BINARY_SUFFIXES) - 1:
            number //= 1024
            power += 1
        return f"{sign}{number}{_BINARY_SUFFIXES[power]}"
    mantissa, exponent = _mantissa_exponent(value)
    power = exponent // 3 * 3
    mantissa *= 10 ** (exponent - power)
    if fmt != DECIMAL_EXPONENT:
        # Go's suffixer has no SI suffix beyond E (1e18): it writes no suffix at all, so
        # 1e21 in DecimalSI is written (and stored) as "1" (resource/suffix.go constructBytes)
        return f"{sign}{mantissa}{_DECIMAL_SUFFIXES.get(power, '')}"
    return f"{sign}{mantissa}" + (f"e{power}" if power else "")
