"""The JSON types of a what-if change's fields, checked before an operation reads them.

A change arrives as JSON from the API or a page (``operations.read``); an operation's code,
and the object keys it makes, assume its fields' types, so each field is checked against
its dataclass annotation first and a wrong one is a :class:`ChangeError` naming it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import Field
from typing import Any

from allocation.engine.scenarios.documents import ChangeError

__all__ = ["check_field_types", "json_type"]

# The JSON type each annotation of an operation's fields takes (``int`` also refuses a
# bool, which Python counts as one); a field of another annotation is its check's.
_FIELD_TYPES: dict[str, tuple[type, str]] = {
    "str": (str, "a string"), "str | None": (str, "a string"),
    "int": (int, "an integer"), "dict": (dict, "an object")}


def json_type(value: Any) -> str:
    """``value``'s type as JSON names it, for a message.

    Returns:
        "a boolean", "a number", "a string", "a list", "an object" or "null".
    """
    for kind, name in ((bool, "a boolean"), (int, "a number"), (float, "a number"),
                       (str, "a string"), (list, "a list"), (dict, "an object")):
        if isinstance(value, kind):
            return name
    return "null"


def check_field_types(declared: Iterable[Field], index: int, values: dict[str, Any]) -> None:
    """Check each of ``values`` against the annotation of its field in ``declared`` (an
    operation's dataclass fields).

    Raises:
        ChangeError: a value is not its field's JSON type (at ``changes[index].<field>``).
    """
    annotations = {f.name: f.type for f in declared}
    for name, value in values.items():
        expected = _FIELD_TYPES.get(str(annotations.get(name)))
        if expected is None:
            continue
        kind, said = expected
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ChangeError(index, name, f"must be {said}, not {json_type(value)}")
