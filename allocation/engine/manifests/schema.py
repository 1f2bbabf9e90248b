"""A small declarative schema language for strict manifest validation.

Each schema node checks one value and reports every problem it finds into a
:class:`~allocation.engine.manifests.problems.ProblemList`, with the field path and, for
unknown fields, the closest valid name. Checking never raises and never stops early.

``valid`` answers the same question without saying why: it builds no path, collects no
problem and stops at the first one, so valid input (nearly all input) is checked at a
fraction of the cost; the loader runs ``check`` only on a document found invalid, for its
problems (docs/architecture.md, "Speed"). ``valid(v)`` is true exactly when ``check(v)``
reports nothing; the base class derives it from ``check``, so a schema that does not
override it is still right.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from allocation.engine.manifests.limits import INT64_MAX, INT64_MIN
from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.schema_base import (
    DNS_LABEL,
    DNS_SUBDOMAIN,
    IDENTIFIER,
    Schema,
    join,
    suggest,
    type_name,
)
from allocation.engine.quantity import Quantity

__all__ = [
    "Schema", "Str", "Int", "Bool", "QuantityStr", "AnyValue", "ListOf", "MapOf", "Obj",
    "Check", "join", "type_name", "DNS_SUBDOMAIN", "DNS_LABEL", "IDENTIFIER", "suggest",
]

class AnyValue(Schema):
    """Anything at all (opaque vendor data)."""

    def __init__(self, kind: type | None = None) -> None:
        self.kind = kind

    def check(self, value: Any, path: str, problems: ProblemList) -> None:
        if self.kind is dict and not isinstance(value, dict):
            problems.add(path, f"must be an object, not {type_name(value)}")

    def valid(self, value: Any) -> bool:
        return self.kind is not dict or isinstance(value, dict)


class Str(Schema):
    """A string, optionally with a name pattern, an enumeration or a length limit."""

    def __init__(self, name: tuple | None = None, enum: Iterable[str] | None = None,
                 max_len: int | None = None, allow_empty: bool = True) -> None:
        self.name = name
        self.enum = tuple(enum) if enum is not None else None
        self.max_len = max_len
        self.allow_empty = allow_empty

    def check(self, value: Any, path: str, problems: ProblemList) -> None:
        if not isinstance(value, str):
            problems.add(path, f"must be a string, not {type_name(value)}")
            return
        if self.enum is not None and value not in self.enum:
            problems.add(path, f"unsupported value {value!r}: must be one of "
                         f"{', '.join(self.enum)}{suggest(value, self.enum)}")
        if self.name is not None:
            pattern, limit, message = self.name
            if len(value) > limit or not pattern.match(value):
                problems.add(path, f"invalid name {value!r}: {message}")
        if self.max_len is not None and len(value.encode()) > self.max_len:
            problems.add(path, f"is {len(value.encode())} bytes, longer than the limit of "
                         f"{self.max_len} bytes")
        if not self.allow_empty and value == "":
            problems.add(path, "must not be empty")

    def valid(self, value: Any) -> bool:
        if not isinstance(value, str):
            return False
        if self.enum is not None and value not in self.enum:
            return False
        if self.name is not None:
            pattern, limit, _ = self.name
            if len(value) > limit or not pattern.match(value):
                return False
        if self.max_len is not None and len(value.encode()) > self.max_len:
            return False
        return self.allow_empty or value != ""


class Int(Schema):
    """An integer (booleans are not integers) within optional bounds, always an int64."""

    def __init__(self, minimum: int | None = None, maximum: int | None = None) -> None:
        self.minimum = minimum
        self.maximum = maximum

    def check(self, value: Any, path: str, problems: ProblemList) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                problems.add(path, f"must be an integer, not {type_name(value)}"
                             + (f" {value!r}" if isinstance(value, float | str) else ""))
                return
        if not INT64_MIN <= value <= INT64_MAX:
            problems.add(path, f"{_short(value)} does not fit in a 64-bit integer "
                         f"({INT64_MIN} to {INT64_MAX})")
            return
        if self.minimum is not None and value < self.minimum:
            problems.add(path, f"must be at least {self.minimum}, not {value}")
        if self.maximum is not None and value > self.maximum:
            problems.add(path, f"must be at most {self.maximum}, not {value}")

    def valid(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, int):
            if not (isinstance(value, float) and value.is_integer()):
                return False
            value = int(value)
        return (INT64_MIN <= value <= INT64_MAX
                and (self.minimum is None or value >= self.minimum)
                and (self.maximum is None or value <= self.maximum))


def _short(value: int) -> str:
    """An integer as shown in a message: a 1,000-digit one is not printed whole."""
    text = str(value)
    return text if len(text) <= 40 else f"{text[:12]}...{text[-4:]} ({len(text)} digits)"


class Bool(Schema):
    """A JSON boolean (``"true"`` as a string is refused, as the API server does)."""

    def check(self, value: Any, path: str, problems: ProblemList) -> None:
        if not isinstance(value, bool):
            problems.add(path, f"must be a boolean, not {type_name(value)}")

    def valid(self, value: Any) -> bool:
        return isinstance(value, bool)


_VERDICTS_KEPT = 4096


class QuantityStr(Schema):
    """A Kubernetes quantity: a string such as ``16Gi`` or ``500m``, or a plain number.

    Its magnitude is at most 2^63-1 (about 8Ei), the most a Kubernetes quantity represents;
    ``non_negative`` refuses values below zero, as the API server does for resource requests,
    limits and a node's allocatable.
    """

    def __init__(self, non_negative: bool = False) -> None:
        self.non_negative = non_negative
        self._verdicts: dict[str, bool] = {}  # a cluster repeats a few texts ("1", "40Gi")

    def valid(self, value: Any) -> bool:
        if type(value) is not str:
            return super().valid(value)
        verdict = self._verdicts.get(value)
        if verdict is None:
            verdict = super().valid(value)
            if len(self._verdicts) < _VERDICTS_KEPT:
                self._verdicts[value] = verdict
        return verdict

    def check(self, value: Any, path: str, problems: ProblemList) -> None:

        if isinstance(value, bool) or not isinstance(value, str | int | float):
            problems.add(path, f"must be a quantity such as \"16Gi\", not {type_name(value)}")
            return
        if isinstance(value, float) and not math.isfinite(value):
            problems.add(path, f"{value} is not a quantity")
            return
        try:
            # A JSON number is a quantity too (`cpu: 1`), as for the API server.
            quantity = Quantity.parse(value if isinstance(value, str) else str(value))
        except ValueError as exc:
            problems.add(path, str(exc))
            return
        if abs(quantity.value) > INT64_MAX:
            problems.add(path, f"{_short_text(value)} is out of range: a quantity's magnitude "
                         f"is at most {INT64_MAX} (about 8Ei)")
        elif self.non_negative and quantity.value < 0:
            problems.add(path, f"must be greater than or equal to 0, not {value}")


def _short_text(value: Any) -> str:
    text = str(value)
    return repr(text) if len(text) <= 40 else repr(f"{text[:20]}...") + f" ({len(text)} chars)"


class Check(Schema):
    """A schema followed by a custom check ``fn(value, path, problems)``."""

    def __init__(self, inner: Schema, fn: Callable[[Any, str, ProblemList], None],
                 accepts: Callable[[Any], bool] | None = None) -> None:
        self.inner = inner
        self.fn = fn
        self.accepts = accepts  # fn's verdict alone, cheaper: valid() runs for every object

    def check(self, value: Any, path: str, problems: ProblemList) -> None:
        before = len(problems)
        self.inner.check(value, path, problems)
        if len(problems) == before:
            self.fn(value, path, problems)

    def valid(self, value: Any) -> bool:
        if not self.inner.valid(value):
            return False
        if self.accepts is not None:
            return self.accepts(value)
        scratch = ProblemList()
        self.fn(value, "", scratch)
        return not scratch


class ListOf(Schema):
    """A list whose items all follow ``item``, with optional size bounds."""

    def __init__(self, item: Schema, min_items: int = 0, max_items: int | None = None,
                 unique_key: str | None = None) -> None:
        self.item = item
        self.min_items = min_items
        self.max_items = max_items
        self.unique_key = unique_key

    def check(self, value: Any, path: str, problems: ProblemList) -> None:
        if not isinstance(value, list):
            problems.add(path, f"must be a list, not {type_name(value)}")
            return
        if len(value) < self.min_items:
            problems.add(path, f"must have at least {self.min_items} item(s), not {len(value)}")
        if self.max_items is not None and len(value) > self.max_items:
            problems.add(path, f"must have at most {self.max_items} items, not {len(value)}")
        seen: dict[Any, int] = {}
        for index, item in enumerate(value):
            self.item.check(item, join(path, index), problems)
            if self.unique_key and isinstance(item, dict):
                key = item.get(self.unique_key)
                if isinstance(key, str):
                    if key in seen:
                        problems.add(join(join(path, index), self.unique_key),
                                     f"duplicate {self.unique_key} {key!r} (also at "
                                     f"{join(path, seen[key])})")
                    else:
                        seen[key] = index

    def valid(self, value: Any) -> bool:
        if not isinstance(value, list) or len(value) < self.min_items or (
                self.max_items is not None and len(value) > self.max_items):
            return False
        item_valid = self.item.valid
        unique_key = self.unique_key
        seen: set[str] = set()
        for item in value:
            if not item_valid(item):
                return False
            if unique_key and isinstance(item, dict):
                key = item.get(unique_key)
                if isinstance(key, str):
                    if key in seen:
                        return False
                    seen.add(key)
        return True


class MapOf(Schema):
    """An object used as a map from string keys to values following ``value``."""

    def __init__(self, value: Schema, key: tuple | None = None) -> None:
        self.value = value
        self.key = key

    def check(self, value: Any, path: str, problems: ProblemList) -> None:
        if not isinstance(value, dict):
            problems.add(path, f"must be an object, not {type_name(value)}")
            return
        for key, item in value.items():
            if not isinstance(key, str):
                problems.add(path, f"keys must be strings, not {type_name(key)} {key!r}")
                continue
            if self.key is not None:
                pattern, limit, message = self.key
                if len(key) > limit or not pattern.match(key):
                    problems.add(join(path, key), f"invalid key {key!r}: {message}")
            self.value.check(item, join(path, key), problems)

    def valid(self, value: Any) -> bool:
        if not isinstance(value, dict):
            return False
        item_valid = self.value.valid
        for key, item in value.items():
            if not isinstance(key, str):
                return False
            if self.key is not None:
                pattern, limit, _ = self.key
                if len(key) > limit or not pattern.match(key):
                    return False
            if not item_valid(item):
                return False
        return True


class Obj(Schema):
    """An object with named fields.

    ``required`` names fields that must be present; ``one_of`` groups fields of which exactly
    one must be set (``at_most_one`` relaxes that to zero or one). A closed object (the
    default) reports unknown fields, suggesting the closest valid name; an open object (core
    Kubernetes kinds) keeps them untouched.
    """

    def __init__(self, fields: Mapping[str, Schema], required: Iterable[str] = (),
                 one_of: Iterable[tuple[str, ...]] = (), at_most_one: Iterable[tuple] = (),
                 open: bool = False, what: str = "field") -> None:
        self.fields = dict(fields)
        self.required = tuple(required)
        self.one_of = tuple(one_of)
        self.at_most_one = tuple(at_most_one)
        self.open = open
        self.what = what
        # The groups as sets, for ``valid``: which names of a group an object has is one
        # intersection in C rather than a lookup per name (a slice's device attributes,
        # each a one-of over every value type, are most of a slice's check).
        self._one_of_sets = tuple(frozenset(group) for group in self.one_of)
        self._at_most_one_sets = tuple(frozenset(group) for group in self.at_most_one)

    def check(self, value: Any, path: str, problems: ProblemList) -> None:
        if not isinstance(value, dict):
            problems.add(path, f"must be an object, not {type_name(value)}")
            return
        for name in self.required:
            if value.get(name) is None:
                problems.add(join(path, name), "required field is missing")
        for key, item in value.items():
            schema = self.fields.get(key)
            if schema is None:
                if not self.open:
                    problems.add(join(path, key), f"unknown {self.what}"
                                 f"{suggest(str(key), self.fields)}")
                continue
            if item is None and key not in self.required:
                continue
            schema.check(item, join(path, key), problems)
        for group in self.one_of:
            present = [name for name in group if value.get(name) is not None]
            if len(present) != 1:
                where = path or "<document>"
                if present:
                    problems.add(where, f"exactly one of {', '.join(group)} may be set, "
                                 f"found {', '.join(present)}")
                else:
                    problems.add(where, f"exactly one of {', '.join(group)} must be set")
        for group in self.at_most_one:
            present = [name for name in group if value.get(name) is not None]
            if len(present) > 1:
                problems.add(path or "<document>", f"at most one of {', '.join(group)} may "
                             f"be set, found {', '.join(present)}")

    def valid(self, value: Any) -> bool:
        if not isinstance(value, dict):
            return False
        for name in self.required:
            if value.get(name) is None:
                return False
        fields = self.fields
        for key, item in value.items():
            schema = fields.get(key)
            if schema is None:
                if self.open:
                    continue
                return False
            # a None here is not a required field's: those returned above
            if item is not None and not schema.valid(item):
                return False
        for group in self._one_of_sets:
            present = group.intersection(value)
            if len(present) == 1:  # nearly always (a device attribute's one value type)
                for name in present:
                    if value[name] is None:
                        return False
            elif _set_in(group, value) != 1:
                return False
        # most objects have no such group: no generator made for them
        return not self._at_most_one_sets or all(
            _set_in(group, value) <= 1 for group in self._at_most_one_sets)


def _set_in(group: frozenset, value: dict) -> int:
    """How many names of ``group`` are set (present and not null) in ``value``."""
    present = group.intersection(value)
    if len(present) == 1:
        (name,) = present
        return value[name] is not None
    return sum(value[name] is not None for name in present)
