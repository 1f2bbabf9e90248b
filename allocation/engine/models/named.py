"""The ``namedResourcesWithAttributes`` model (KEP-4381 structured parameters).

A driver publishes a list of named devices with typed attributes; each entry of a request's
``required`` list takes one whole device whose attributes satisfy its selector and the class
filters. A device's ID in the allocation result is its name.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from typing import Any

from allocation.engine.attributes import Attribute, AttributeSet, parse_attribute_value
from allocation.engine.constants import STRUCTURED_FINALIZER
from allocation.engine.manifests.common import TYPED_ATTRIBUTE_FIELDS, cel_str
from allocation.engine.manifests.common import attributes as attributes_schema
from allocation.engine.manifests.schema import DNS_SUBDOMAIN, ListOf, Obj, Str
from allocation.engine.models.base import (
    HELD,
    Candidate,
    Inventory,
    Owner,
    Refusal,
    Request,
    StructuredModel,
)
from allocation.engine.models.selection import refusal_for, required_requests, selectors_pass

__all__ = ["NamedResourcesModel", "NamedInventory", "attribute_set"]


def attribute_set(raw: Sequence[dict] | None) -> AttributeSet:
    """An :class:`AttributeSet` from a validated manifest attribute list."""

    out = []
    for entry in raw or ():
        for type_name in TYPED_ATTRIBUTE_FIELDS:
            if entry.get(type_name) is not None:
                value = parse_attribute_value(type_name, entry[type_name])
                out.append(Attribute(entry["name"], type_name, value))
                break
    return AttributeSet(out)


class NamedInventory(Inventory):
    """Named devices of one driver on one node; each is free or held by one claim."""

    def __init__(self, model: NamedResourcesModel, node_name: str, driver_name: str,
                 devices: list[Candidate]) -> None:
        self.model = model
        self.node_name = node_name
        self.driver_name = driver_name
        self.devices = devices
        self.by_id = {d.id: d for d in devices}
        self.holder: dict[str, Owner] = {}

    def candidates(self, request: Request, strategy: str,
                   refusals: list[Refusal] | None = None) -> Iterator[Candidate]:
        holder = self.holder
        selectors = request.selectors
        for device in self.devices:
            owner = holder.get(device.id)
            if owner is not None:
                if refusals is not None:
                    refusals.append(Refusal(device.id, HELD + owner))
                continue
            if selectors_pass(selectors, device.data):
                yield device
            elif refusals is not None:
                refusals.append(Refusal(device.id, refusal_for(selectors, device.data)))

    def clone(self) -> NamedInventory:
        twin = copy.copy(self)
        twin.holder = dict(self.holder)
        return twin

    def take(self, candidate: Candidate, owner: Owner) -> None:
        current = self.holder.get(candidate.id)
        if current is not None and current != owner:
            raise ValueError(f"device {candidate.id} is already allocated to claim {current}")
        self.holder[candidate.id] = owner

    def release(self, candidate: Candidate, owner: Owner) -> None:
        if self.holder.get(candidate.id) == owner:
            del self.holder[candidate.id]

    def resolve(self, item: dict) -> Candidate | str:
        device = self.by_id.get(str(item.get("id")))
        if device is None:
            return (f"no device {item.get('id')!r} of driver {self.driver_name} on node "
                    f"{self.node_name}")
        return device

    def usage(self) -> dict[str, int]:
        return {"total": len(self.devices), "allocated": len(self.holder)}


class NamedResourcesModel(StructuredModel):
    """Whole named devices selected by CEL over their attributes."""

    name = "namedResourcesWithAttributes"
    finalizer = STRUCTURED_FINALIZER
    source = "slice"
    slice_schema = ListOf(Obj({"name": Str(DNS_SUBDOMAIN), "attributes": attributes_schema},
                              required=("name",)), unique_key="name")
    request_schema = Obj({"required": ListOf(Obj({"selector": cel_str}, required=("selector",)),
                                             min_items=1)}, required=("required",))
    filter_schema = Obj({"selector": cel_str}, required=("selector",))
    result_schema = Obj({"resources": ListOf(Obj({"id": Str(allow_empty=False)},
                                                 required=("id",)))}, required=("resources",))

    def build_inventory(self, node_name: str, driver_name: str,
                        published: Sequence[Any]) -> NamedInventory:
        devices: list[Candidate] = []
        for entries in published:
            for entry in entries or ():
                devices.append(Candidate(entry["name"], len(devices),
                                         attribute_set(entry.get("attributes"))))
        return NamedInventory(self, node_name, driver_name, devices)

    def compile_requests(self, driver_name: str, value: Any, filters: Sequence[Any],
                         label: str) -> list[Request]:
        return required_requests(self, driver_name, value, filters, label)

    def encode_result(self, picks: Sequence[Candidate]) -> dict:
        return {"resources": [{"id": c.id} for c in picks]}
