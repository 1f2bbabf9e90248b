"""Structured models (named resources, partitionable, counters) behind one registry."""

from __future__ import annotations

from allocation.engine.models import registry
from allocation.engine.models.base import (
    Candidate,
    Inventory,
    Refusal,
    Request,
    StructuredModel,
)
from allocation.engine.models.named import NamedResourcesModel

__all__ = ["registry", "Candidate", "Inventory", "Refusal", "Request", "StructuredModel"]

if registry.get(NamedResourcesModel.name) is None:
    registry.register(NamedResourcesModel())
