from __future__ import annotations

import pytest

from allocation.engine.attributes import Attribute, AttributeSet, parse_attribute_value
from allocation.engine.quantity import Quantity
from allocation.engine.versions import parse_version


def _set() -> AttributeSet:
    return AttributeSet([
        Attribute("memory", "quantity", Quantity.parse("16Gi")),
        Attribute("model", "string", "A100"),
        Attribute("count", "int", 1),
        Attribute("flag", "bool", True),
        Attribute("ids", "intSlice", (1, 2)),
        Attribute("tags", "stringSlice", ("a",)),
        Attribute("runtimeVersion", "version", parse_version("v12.1")),
    ])


def test_mapping_behaviour_and_merge() -> None:
    attributes = _set()
    assert len(attributes) == 7
    assert "memory" in attributes and "nope" not in attributes
    assert attributes.get("model") == Attribute("model", "string", "A100")
    assert attributes.get("nope") is None
    merged = attributes.merged([Attribute("model", "string", "H100"), Attribute("x", "int", 2)])
    assert merged.get("model").value == "H100"
    assert attributes.get("model").value == "A100"
    assert len(merged) == 8


def test_hash_and_equality_include_the_type() -> None:
    assert _set() == _set() and hash(_set()) == hash(_set())
    as_bool = AttributeSet([Attribute("x", "bool", True)])
    as_int = AttributeSet([Attribute("x", "int", 1)])
    assert as_bool != as_int


def test_read_key_is_equal_exactly_when_the_read_attributes_are() -> None:
    def key(*attributes: Attribute, names: tuple[str, ...] = ("memory", "x")) -> tuple:
        return AttributeSet([Attribute("uuid", "string", str(id(attributes))),
                             *attributes]).read_key(names)

    big = key(Attribute("memory", "quantity", Quantity.parse("80Gi")))
    assert big == key(Attribute("memory", "quantity", Quantity.parse("85899345920")))
    assert hash(big) == hash(key(Attribute("memory", "quantity", Quantity.parse("80Gi"))))
    assert big != key(Attribute("memory", "quantity", Quantity.parse("40Gi")))
    assert key(Attribute("memory", "quantity", Quantity.parse("500m"))) == \
        key(Attribute("memory", "quantity", Quantity.parse("0.5")))
    assert big != key()  # absent differs from present
    assert key(Attribute("x", "bool", True)) != key(Attribute("x", "int", 1))
    assert key(Attribute("x", "version", parse_version("1.2.3"))) == \
        key(Attribute("x", "version", parse_version("1.2.3")))
    assert key(names=()) == ()


def test_read_key_holds_no_quantity() -> None:
    """A key hashes and compares in C: a quantity stands as its exact ratio, not as the
    object whose hash runs ``Fraction``'s in Python."""
    parts = _set().read_key(("memory", "count", "nope"))
    assert parts == (("quantity", (16 * 2**30, 1)), ("int", 1), None)
    assert all(type(part) is tuple or part is None for part in parts)


def test_cel_activation_tags_quantities_and_versions() -> None:
    activation = _set().cel_activation()
    assert activation["attributes"]["memory"] == {"__q": "16Gi"}
    assert activation["quantities"] == {"memory": {"__q": "16Gi"}}
    assert activation["versions"] == {"runtimeVersion": {"__v": "12.1.0"}}
    assert activation["intSlices"] == {"ids": [1, 2]}
    assert activation["bools"] == {"flag": True}
    assert _set().cel_activation() is not None
    attributes = _set()
    assert attributes.cel_activation() is attributes.cel_activation()


@pytest.mark.parametrize(
    ("type_name", "raw", "value"),
    [
        ("quantity", "8Gi", Quantity.parse("8Gi")),
        ("quantity", 4, Quantity.parse("4")),
        ("bool", False, False),
        ("int", -3, -3),
        ("intSlice", [1, 2], (1, 2)),
        ("string", "x", "x"),
        ("stringSlice", ["a", "b"], ("a", "b")),
        ("version", "v1.2", parse_version("1.2.0")),
    ],
)
def test_parse_attribute_value(type_name: str, raw: object, value: object) -> None:
    assert parse_attribute_value(type_name, raw) == value


@pytest.mark.parametrize(
    ("type_name", "raw", "message"),
    [
        ("bool", "yes", "bool must be true or false"),
        ("int", 1.5, "int must be an integer"),
        ("int", True, "int must be an integer"),
        ("int", 2**63, "out of the 64-bit integer range"),
        ("intSlice", [1, "2"], "intSlice item must be an integer"),
        ("stringSlice", "a", "stringSlice must be a list"),
        ("version", "one", "not a valid semantic version"),
        ("quantity", "16Gx", "not a valid quantity"),
        ("quantity", True, "quantity must be a string"),
        ("colour", "red", "unknown attribute type"),
    ],
)
def test_parse_attribute_value_errors(type_name: str, raw: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_attribute_value(type_name, raw)
