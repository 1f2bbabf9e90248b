"""Warnings about a write that is valid but probably not what was meant.

Today one kind: a selector reading a device attribute that no device in the stored cluster
has (:mod:`allocation.engine.manifests.attribute_names`). Computed after the write, on the
cluster as it now stands, by every way in that writes manifests (upload, ``import``, the
YAML editor, the admin).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from allocation.engine.manifests import Problem
from allocation.engine.manifests.attribute_names import (
    known_attributes,
    unknown_attribute_warnings,
)
from allocation.engine.manifests.cel_sources import cel_sources
from allocation.engine.objects import KObject
from allocation.models import NodeResourceSlice, ResourceSlice

__all__ = ["attribute_warnings"]


def attribute_warnings(objects: Iterable[KObject]) -> list[Problem]:
    """A warning per attribute a selector of ``objects`` reads that no stored device has."""
    objects = list(objects)
    if not any(_has_selectors(o) for o in objects):
        return []  # no need to read the slices
    documents = [(model.KIND, json.loads(document))
                 for model in (NodeResourceSlice, ResourceSlice)
                 for document in model.objects.values_list("document", flat=True)]
    return unknown_attribute_warnings(objects, known_attributes(documents))


def _has_selectors(obj: KObject) -> bool:
    return bool(cel_sources(obj.kind_name, obj.raw))
