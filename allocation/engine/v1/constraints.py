"""Claim constraints: matchAttribute and distinctAttribute, with upstream's bookkeeping
(docs/v1.md, constraints).

With gate DRAListTypeAttributes (1.36, the experimental allocator) an attribute's value is
a set, a scalar being a set of one (``attributeAsSet``): devices match when their sets
share a value, and the shared values narrow as devices are added (never widened again when
one is removed: upstream's quirk); distinct devices' sets must be disjoint.
"""

from __future__ import annotations

from allocation.engine.v1_attribute_types import ATTRIBUTE_TYPES, item_type

__all__ = ["DistinctAttribute", "MatchAttribute", "lookup_attribute", "value_set",
           "attributes_meet"]

ValueSet = tuple[str, frozenset]
"""An attribute value as a set: (its scalar type, its values)."""


def lookup_attribute(device, name: str) -> tuple[str, object] | None:
    """``(type, value)`` of attribute ``name`` (full name, then the bare id when the domain
    is the device's driver), or None; ``("", None)`` for one of no known type. A list
    type's value is a tuple."""
    attrs = device.attributes
    attr = attrs.get(name)
    if attr is None:
        domain, sep, ident = name.partition("/")
        if not sep or domain != device.driver:
            return None
        attr = attrs.get(ident)
        if attr is None:
            return None
    for t in ATTRIBUTE_TYPES:
        if t in attr:
            value = attr[t]
            return (t, tuple(value)) if type(value) is list else (t, value)
    return ("", None)


def value_set(attr: tuple[str, object] | None) -> ValueSet | None:
    """``attributeAsSet``: the values of a looked-up attribute as a set of its scalar type,
    None for none or an unknown type (and an empty list, which validation refuses)."""
    if attr is None or not attr[0]:
        return None
    kind, value = attr
    values = frozenset(value) if isinstance(value, tuple) else frozenset((value,))
    return (item_type(kind), values) if values else None


def attributes_meet(a: tuple[str, object] | None, b: tuple[str, object] | None,
                    sets: bool) -> bool:
    """Whether two looked-up attributes match: equal values, or with ``sets`` (list types)
    a shared value of one type (``hasIntersection``)."""
    if not sets:
        return a is not None and a == b
    sa, sb = value_set(a), value_set(b)
    return sa is not None and sb is not None and sa[0] == sb[0] and not sa[1].isdisjoint(sb[1])


class _Constraint:
    def __init__(self, requests: list[str], attribute: str) -> None:
        self.requests = set(requests)
        self.attribute = attribute

    def fresh(self) -> _Constraint:
        """An empty constraint of the same kind and settings, for the next call."""
        raise NotImplementedError

    def applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        if not sub:
            return request in self.requests
        return request in self.requests or f"{request}/{sub}" in self.requests


class MatchAttribute(_Constraint):
    """All devices of the covered requests share one attribute value (with ``sets``, the
    list types' reading: one value of their sets, ``shared`` the values still common)."""

    kind = "matchAttribute"

    def __init__(self, requests: list[str], attribute: str, sets: bool = False) -> None:
        super().__init__(requests, attribute)
        self.value = None
        self.count = 0
        self.first_device = None
        self.sets = sets
        self.shared: ValueSet | None = None

    def fresh(self) -> MatchAttribute:
        return MatchAttribute(list(self.requests), self.attribute, self.sets)

    def add(self, request: str, sub: str, device) -> bool:
        if not self.applies(request, sub):
            return True
        attr = lookup_attribute(device, self.attribute)
        if attr is None:
            return False
        if self.sets:
            return self._add_set(attr, device)
        if self.count == 0:
            self.value, self.first_device = attr, device
            self.count = 1
            return True
        if not attr[0] or attr != self.value:
            return False
        self.count += 1
        return True

    def _add_set(self, attr: tuple[str, object], device) -> bool:
        values = value_set(attr)
        if values is None:  # unlike a scalar's, even the first device needs a known type
            return False
        if self.count == 0:
            self.shared, self.value, self.first_device = values, attr, device
        else:
            shared = self.shared
            if values[0] != shared[0] or shared[1].isdisjoint(values[1]):
                return False
            self.shared = (shared[0], shared[1] & values[1])
        self.count += 1
        return True

    def remove(self, request: str, sub: str, device) -> None:
        if self.applies(request, sub):
            self.count -= 1


class DistinctAttribute(_Constraint):
    """Devices of the covered requests differ in one attribute; one value is remembered per
    request name (upstream's quirk, docs/v1.md).

    ``same_device_only`` is the 1.34 reading: its constraint compared the attribute values'
    pointers, not the values, so only the very same device (a multi-allocatable one picked
    again) counts as a duplicate.
    """

    kind = "distinctAttribute"

    def __init__(self, requests: list[str], attribute: str,
                 same_device_only: bool = False, sets: bool = False) -> None:
        super().__init__(requests, attribute)
        self.values: dict[str, tuple] = {}  # request name -> (attribute, device)
        self.count = 0
        self.same_device_only = same_device_only
        self.sets = sets  # list types: values are sets, which must be disjoint

    def fresh(self) -> DistinctAttribute:
        return DistinctAttribute(list(self.requests), self.attribute, self.same_device_only,
                                 self.sets)

    def add(self, request: str, sub: str, device) -> bool:
        if not self.applies(request, sub):
            return True
        attr = lookup_attribute(device, self.attribute)
        if attr is None:
            return False
        # the first device is always taken; later ones need a known type and no duplicate
        if self.count and (not attr[0] or any(self._duplicate(seen, attr, device)
                                              for seen in self.values.values())):
            return False
        self.values[request] = (attr, device)
        self.count += 1
        return True

    def _duplicate(self, seen: tuple, attr: tuple, device) -> bool:
        if self.same_device_only:
            return seen[1] is device
        return attributes_meet(seen[0], attr, self.sets)

    def remove(self, request: str, sub: str, device) -> None:
        if self.applies(request, sub):
            self.values.pop(request, None)
            self.count -= 1
