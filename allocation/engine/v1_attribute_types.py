"""The value types of a resource.k8s.io/v1 device attribute, and how many values a device
may have: one home for the schema, the rules, the CEL activation and the constraints
(spec ``v1.md`` section 1; list types: KEP-5491, Kubernetes 1.36, gate
DRAListTypeAttributes, docs/v1.md "List-type attributes").

An attribute sets exactly one type. A list type holds a non-empty list of its scalar's
values (``ints: [0, 1]``); a selector sees a CEL list, and the constraints compare sets.
"""

from __future__ import annotations

__all__ = ["SCALAR_ATTRIBUTE_TYPES", "LIST_ATTRIBUTE_TYPES", "ATTRIBUTE_TYPES",
           "MAX_ATTRIBUTE_VALUES", "item_type"]

SCALAR_ATTRIBUTE_TYPES = ("int", "bool", "string", "version")
LIST_ATTRIBUTE_TYPES = ("ints", "bools", "strings", "versions")
ATTRIBUTE_TYPES = (*SCALAR_ATTRIBUTE_TYPES, *LIST_ATTRIBUTE_TYPES)

MAX_ATTRIBUTE_VALUES = 48
"""``ResourceSliceMaxAttributeValuesPerDevice``: the values of one device's attributes, each
item of a list counted (a scalar is one), and the longest list CEL's ``includes`` reads."""


def item_type(attribute_type: str) -> str:
    """The scalar type of ``attribute_type``'s values: ``int`` for ``ints`` and ``int``."""
    return attribute_type[:-1] if attribute_type in LIST_ATTRIBUTE_TYPES else attribute_type
