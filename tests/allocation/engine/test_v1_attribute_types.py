"""The value types of a v1 device attribute (``v1_attribute_types.py``)."""

from __future__ import annotations

from allocation.engine.v1_attribute_types import (
    ATTRIBUTE_TYPES,
    LIST_ATTRIBUTE_TYPES,
    SCALAR_ATTRIBUTE_TYPES,
    item_type,
)


def test_each_list_type_holds_its_scalar():
    assert ATTRIBUTE_TYPES == SCALAR_ATTRIBUTE_TYPES + LIST_ATTRIBUTE_TYPES
    assert [item_type(t) for t in LIST_ATTRIBUTE_TYPES] == list(SCALAR_ATTRIBUTE_TYPES)
    assert [item_type(t) for t in SCALAR_ATTRIBUTE_TYPES] == list(SCALAR_ATTRIBUTE_TYPES)
