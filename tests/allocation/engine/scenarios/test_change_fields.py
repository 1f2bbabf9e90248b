"""The JSON types of a change's fields (scenarios/change_fields.py); through ``read`` in
test_operations.py."""

from __future__ import annotations

from dataclasses import dataclass, fields

import pytest

from allocation.engine.scenarios.change_fields import check_field_types, json_type
from allocation.engine.scenarios.documents import ChangeError


@dataclass
class _Fields:
    name: str
    count: int
    manifest: dict
    namespace: str | None = None
    other: list | None = None


@pytest.mark.parametrize(("value", "said"), [
    (True, "a boolean"), (1, "a number"), (1.5, "a number"), ("x", "a string"),
    ([], "a list"), ({}, "an object"), (None, "null")])
def test_json_type_names_a_value_as_json_does(value, said):
    assert json_type(value) == said


@pytest.mark.parametrize(("values", "message"), [
    ({"name": 5}, "changes[4].name: must be a string, not a number"),
    ({"count": True}, "changes[4].count: must be an integer, not a boolean"),
    ({"count": "2"}, "changes[4].count: must be an integer, not a string"),
    ({"manifest": []}, "changes[4].manifest: must be an object, not a list"),
    ({"namespace": {}}, "changes[4].namespace: must be a string, not an object"),
])
def test_a_field_of_another_type_is_named(values, message):
    with pytest.raises(ChangeError) as raised:
        check_field_types(fields(_Fields), 4, values)
    assert str(raised.value) == message


def test_fields_of_their_types_and_of_unchecked_annotations_pass():
    check_field_types(fields(_Fields), 0, {"name": "n", "count": 2, "manifest": {},
                                           "namespace": "ns", "other": "anything"})
