"""Structured models (named resources, partitionable, counters) behind one registry."""

from __future__ import annotations

from allocation.engine.models import registry
from allocation.engine.models.base import (
    Candidate,
    Inventory,
    Refusal,
    Request,
    Strategy,
    StructuredModel,
)
from allocation.engine.models.counter import CounterModel
from allocation.engine.models.named import NamedResourcesModel
from allocation.engine.models.partitionable import PartitionableModel

__all__ = ["registry", "Candidate", "Inventory", "Refusal", "Request", "StructuredModel",
           "Strategy"]

for _model in (NamedResourcesModel(), PartitionableModel(), CounterModel()):
    if registry.get(_model.name) is None:
        registry.register(_model)
