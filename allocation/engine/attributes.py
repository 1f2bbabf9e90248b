"""Typed device attributes, shared by every structured model (named resources, partitions)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import semver

from allocation.engine.quantity import Quantity
from allocation.engine.versions import parse_version

__all__ = [
    "ATTRIBUTE_TYPES",
    "CEL_TYPE_MAPS",
    "Attribute",
    "AttributeSet",
    "parse_attribute_value",
    "QUANTITY_TAG",
    "VERSION_TAG",
]

ATTRIBUTE_TYPES = ("quantity", "bool", "int", "intSlice", "string", "stringSlice", "version")

#: The CEL variable holding the attributes of each type.
CEL_TYPE_MAPS = {
    "quantity": "quantities",
    "version": "versions",
    "int": "ints",
    "bool": "bools",
    "string": "strings",
    "intSlice": "intSlices",
    "stringSlice": "stringSlices",
}

#: Keys of the single-entry maps that stand for a quantity or a version inside CEL.
QUANTITY_TAG = "__q"
VERSION_TAG = "__v"

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True)
class Attribute:
    """One named, typed attribute value of a device."""

    name: str
    type: str
    value: object  # Quantity | bool | int | tuple[int, ...] | str | tuple[str, ...] | Version


class AttributeSet:
    """An immutable, hashable mapping of attribute name to :class:`Attribute`."""

    __slots__ = ("_items", "_hash", "_activation")

    def __init__(self, attributes: Iterable[Attribute] = ()) -> None:
        items: dict[str, Attribute] = {}
        for attribute in attributes:
            items[attribute.name] = attribute
        self._items = items
        self._hash: int | None = None
        self._activation: dict[str, dict[str, object]] | None = None

    def get(self, name: str) -> Attribute | None:
        """The attribute called ``name``, or None."""
        return self._items.get(name)

    def __iter__(self) -> Iterator[Attribute]:
        return iter(self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def names(self) -> frozenset[str]:
        """The attribute names."""
        return frozenset(self._items)

    def merged(self, later: Iterable[Attribute]) -> AttributeSet:
        """A new set with ``later`` added; on a name clash the later attribute wins."""
        return AttributeSet([*self._items.values(), *later])

    def read_key(self, names: tuple[str, ...]) -> tuple:
        """What the attributes called ``names`` are, as a key that hashes and compares in C:
        per name, None when absent, else the type and the value, a quantity's as its exact
        ratio. Two sets give equal keys exactly when those attributes are equal (``true``
        and ``1`` differ by type; ``80Gi`` and ``85899345920`` are one quantity). A
        selector's result cache is keyed on it (docs/cel.md, "Result cache"): hashing the
        attributes themselves ran a quantity's ``Fraction`` hash and equality in Python,
        once for every device a selector was asked about."""
        items = self._items
        key = []
        for name in names:
            attribute = items.get(name)
            if attribute is None:
                key.append(None)
                continue
            value = attribute.value
            if value.__class__ is Quantity:
                value = value.value.as_integer_ratio()
            key.append((attribute.type, value))
        return tuple(key)

    def cel_activation(self) -> dict[str, dict[str, object]]:
        """The CEL variables for a selector over these attributes (built once, do not mutate)."""
        if self._activation is None:
            activation: dict[str, dict[str, object]] = {"attributes": {}}
            for variable in CEL_TYPE_MAPS.values():
                activation[variable] = {}
            for attribute in self._items.values():
                value = _cel_value(attribute)
                activation["attributes"][attribute.name] = value
                activation[CEL_TYPE_MAPS[attribute.type]][attribute.name] = value
            self._activation = activation
        return self._activation

    def __eq__(self, other: object) -> bool:
        if isinstance(other, AttributeSet):
            return self._items == other._items
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._items.values()))
        return self._hash

    def __repr__(self) -> str:
        inner = ", ".join(f"{a.name}={a.type}:{_display(a)}" for a in self._items.values())
        return f"AttributeSet({inner})"


def parse_attribute_value(type_name: str, raw: object) -> object:
    """Convert a manifest value to the typed value of ``type_name``; ValueError if it is not."""
    if type_name == "quantity":
        if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            raise ValueError(f"quantity must be a string such as \"16Gi\", not {_kind(raw)}")
        return Quantity.parse(raw if isinstance(raw, str) else str(raw))
    if type_name == "bool":
        if not isinstance(raw, bool):
            raise ValueError(f"bool must be true or false, not {_kind(raw)} {raw!r}")
        return raw
    if type_name == "int":
        return _int(raw, "int")
    if type_name == "intSlice":
        return tuple(_int(item, "intSlice item") for item in _list(raw, "intSlice"))
    if type_name == "string":
        if not isinstance(raw, str):
            raise ValueError(f"string must be a string, not {_kind(raw)}")
        return raw
    if type_name == "stringSlice":
        items = _list(raw, "stringSlice")
        for item in items:
            if not isinstance(item, str):
                raise ValueError(f"stringSlice items must be strings, not {_kind(item)}")
        return tuple(items)
    if type_name == "version":
        if not isinstance(raw, str):
            raise ValueError(f"version must be a string such as \"1.2.3\", not {_kind(raw)}")
        return parse_version(raw)
    raise ValueError(f"unknown attribute type {type_name!r}; expected one of "
                     + ", ".join(ATTRIBUTE_TYPES))


def _int(raw: object, what: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ValueError(f"{what} must be an integer, not {_kind(raw)} {raw!r}")
    if not _INT64_MIN <= raw <= _INT64_MAX:
        raise ValueError(f"{what} {raw} is out of the 64-bit integer range")
    return raw


def _list(raw: object, what: str) -> list[object]:
    if not isinstance(raw, (list, tuple)):
        raise ValueError(f"{what} must be a list, not {_kind(raw)}")
    return list(raw)


_KIND_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
               list: "a list", dict: "a mapping", type(None): "null"}


def _kind(raw: object) -> str:
    return _KIND_NAMES.get(type(raw), type(raw).__name__)


def _cel_value(attribute: Attribute) -> object:
    value = attribute.value
    if isinstance(value, Quantity):
        return {QUANTITY_TAG: str(value)}
    if isinstance(value, semver.Version):
        return {VERSION_TAG: str(value)}
    if isinstance(value, tuple):
        return list(value)
    return value


def _display(attribute: Attribute) -> str:
    value = attribute.value
    if isinstance(value, tuple):
        return "[" + ", ".join(str(item) for item in value) + "]"
    return str(value)
