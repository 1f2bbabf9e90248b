"""Library-independent meaning of quantities and versions inside CEL.

Quantities and versions travel through CEL as single-entry maps (``{"__q": "16Gi"}``,
``{"__v": "1.2.3"}``) holding the canonical text; these functions give them their meaning.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache

import semver

from allocation.engine.attributes import QUANTITY_TAG, VERSION_TAG
from allocation.engine.quantity import Quantity
from allocation.engine.versions import parse_version

__all__ = [
    "cel_equal",
    "cel_compare",
    "make_quantity",
    "make_version",
    "is_quantity_text",
    "is_version_text",
    "untag",
    "QUANTITY_MEMBERS",
    "VERSION_MEMBERS",
]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def make_quantity(text: str) -> dict[str, str]:
    """``quantity(s)``: the tagged quantity, ValueError when ``s`` is not one."""
    return {QUANTITY_TAG: str(Quantity.parse(text))}


def make_version(text: str) -> dict[str, str]:
    """``semver(s)``: the tagged version, ValueError when ``s`` is not one."""
    return {VERSION_TAG: str(parse_version(text))}


def is_quantity_text(text: str) -> bool:
    """``isQuantity(s)``."""
    try:
        Quantity.parse(text)
    except ValueError:
        return False
    return True


def is_version_text(text: str) -> bool:
    """``isSemver(s)``."""
    try:
        parse_version(text)
    except ValueError:
        return False
    return True


def untag(value: object) -> object:
    """Replace tagged quantities and versions by their canonical text, recursively."""
    if isinstance(value, Mapping):
        tag = _tag(value)
        if tag is not None:
            return value[tag]
        return {untag(k): untag(v) for k, v in value.items()}
    if isinstance(value, list):
        return [untag(item) for item in value]
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def cel_compare(left: object, right: object) -> int:
    """-1, 0 or 1 for two quantities or two versions; a string side is parsed as the other's
    type. ValueError for anything else."""
    kind = _tag(left) or _tag(right)
    if kind == QUANTITY_TAG:
        a, b = _quantity(left), _quantity(right)
        return (a > b) - (a < b)
    if kind == VERSION_TAG:
        return _version(left).compare(_version(right))
    raise ValueError(f"cannot compare {_describe(left)} with {_describe(right)}")


def cel_equal(left: object, right: object) -> bool:
    """CEL equality (heterogeneous numbers, no bool/int mixing) with quantity and version
    semantics; a string compared with a quantity or version is parsed as that type."""
    if _tag(left) or _tag(right):
        if isinstance(left, (str, Mapping)) and isinstance(right, (str, Mapping)):
            if _tag(left) and _tag(right) and _tag(left) != _tag(right):
                return False
            if isinstance(left, Mapping) and not _tag(left):
                return False
            if isinstance(right, Mapping) and not _tag(right):
                return False
            return cel_compare(left, right) == 0
        return False
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(cel_equal, left, right))
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        if len(left) != len(right):
            return False
        for key, value in left.items():
            other = _lookup(right, key)
            if other is _MISSING or not cel_equal(value, other):
                return False
        return True
    if type(left) is not type(right):
        return False
    return left == right


_MISSING = object()


def _lookup(mapping: Mapping[object, object], key: object) -> object:
    for candidate, value in mapping.items():
        if cel_equal(candidate, key):
            return value
    return _MISSING


def _tag(value: object) -> str | None:
    if isinstance(value, Mapping) and len(value) == 1:
        if QUANTITY_TAG in value:
            return QUANTITY_TAG
        if VERSION_TAG in value:
            return VERSION_TAG
    return None


_parse_quantity = lru_cache(maxsize=4096)(Quantity.parse)
_parse_version = lru_cache(maxsize=4096)(parse_version)


def _quantity(value: object) -> Quantity:
    if isinstance(value, str):
        return _parse_quantity(value)
    if _tag(value) == QUANTITY_TAG:
        return _parse_quantity(value[QUANTITY_TAG])  # type: ignore[index]
    raise ValueError(f"expected a quantity, not {_describe(value)}")


def _version(value: object) -> semver.Version:
    if isinstance(value, str):
        return _parse_version(value)
    if _tag(value) == VERSION_TAG:
        return _parse_version(value[VERSION_TAG])  # type: ignore[index]
    raise ValueError(f"expected a version, not {_describe(value)}")


def _describe(value: object) -> str:
    tag = _tag(value)
    if tag == QUANTITY_TAG:
        return f"quantity {value[tag]}"  # type: ignore[index]
    if tag == VERSION_TAG:
        return f"version {value[tag]}"  # type: ignore[index]
    if isinstance(value, bool):
        return "a bool"
    return {int: "an int", float: "a double", str: "a string", list: "a list"}.get(
        type(value), "a map" if isinstance(value, Mapping) else type(value).__name__
    )


def _as_integer(value: object) -> int:
    number = _quantity(value)
    if not number.is_integer or not _INT64_MIN <= number.value <= _INT64_MAX:
        raise ValueError(f"quantity {number} cannot be represented as a 64-bit integer")
    return int(number.value)


def _add(left: object, right: object) -> dict[str, str]:
    other = right if isinstance(right, int) else _quantity(right)
    return {QUANTITY_TAG: str(_quantity(left) + other)}


def _sub(left: object, right: object) -> dict[str, str]:
    other = right if isinstance(right, int) else _quantity(right)
    return {QUANTITY_TAG: str(_quantity(left) - other)}


def _approximate_float(value: object) -> float:
    number = _quantity(value).value
    try:
        return float(number)
    except OverflowError:
        return math.copysign(math.inf, number)


def _sign(value: object) -> int:
    number = _quantity(value).value
    return (number > 0) - (number < 0)


#: Member functions of quantities: name -> (implementation, argument kinds, result kind).
QUANTITY_MEMBERS = {
    "isInteger": (lambda q: _quantity(q).is_integer, (), "bool"),
    "asInteger": (_as_integer, (), "int"),
    "asApproximateFloat": (_approximate_float, (), "double"),
    "sign": (_sign, (), "int"),
    "add": (_add, ("tagged",), "tagged"),
    "sub": (_sub, ("tagged",), "tagged"),
}

#: Member functions of versions.
VERSION_MEMBERS = {
    "major": (lambda v: _version(v).major, (), "int"),
    "minor": (lambda v: _version(v).minor, (), "int"),
    "patch": (lambda v: _version(v).patch, (), "int"),
}
