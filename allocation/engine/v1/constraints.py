"""Claim constraints: matchAttribute and distinctAttribute, with upstream's bookkeeping
(docs/v1.md, constraints)."""

from __future__ import annotations

__all__ = ["DistinctAttribute", "MatchAttribute", "lookup_attribute"]

_TYPES = ("string", "int", "bool", "version")


def lookup_attribute(device, name: str) -> tuple[str, object] | None:
    """``(type, value)`` of attribute ``name`` (full name, then the bare id when the domain
    is the device's driver), or None."""
    attrs = device.attributes
    attr = attrs.get(name)
    if attr is None:
        domain, sep, ident = name.partition("/")
        if not sep or domain != device.driver:
            return None
        attr = attrs.get(ident)
        if attr is None:
            return None
    for t in _TYPES:
        if t in attr:
            return (t, attr[t])
    return ("", None)


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
    """All devices of the covered requests share one attribute value."""

    kind = "matchAttribute"

    def __init__(self, requests: list[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.value = None
        self.count = 0
        self.first_device = None

    def fresh(self) -> MatchAttribute:
        return MatchAttribute(list(self.requests), self.attribute)

    def add(self, request: str, sub: str, device) -> bool:
        if not self.applies(request, sub):
            return True
        attr = lookup_attribute(device, self.attribute)
        if attr is None:
            return False
        if self.count == 0:
            self.value, self.first_device = attr, device
            self.count = 1
            return True
        if not attr[0] or attr != self.value:
            return False
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
                 same_device_only: bool = False) -> None:
        super().__init__(requests, attribute)
        self.values: dict[str, tuple] = {}  # request name -> (attribute, device)
        self.count = 0
        self.same_device_only = same_device_only

    def fresh(self) -> DistinctAttribute:
        return DistinctAttribute(list(self.requests), self.attribute, self.same_device_only)

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
        return seen[0] == attr

    def remove(self, request: str, sub: str, device) -> None:
        if self.applies(request, sub):
            self.values.pop(request, None)
            self.count -= 1
