"""matchAttribute and distinctAttribute (``v1/constraints.py``), with list-type attributes
(gate DRAListTypeAttributes, 1.36): values compare as sets, as upstream's experimental
allocator does (dynamic-resource-allocation v0.36.2 ``attributeAsSet``,
``matchAttributeConstraint``, ``distinctAttributeConstraint``)."""

from __future__ import annotations

from types import SimpleNamespace

from allocation.engine.v1.constraints import (
    DistinctAttribute,
    MatchAttribute,
    attributes_meet,
    lookup_attribute,
    value_set,
)
from tests.allocation.engine.v1.builders import (
    DRIVER,
    allocator,
    claim,
    node,
    picked,
    request,
    slice_,
)

LISTS = "DRAListTypeAttributes=true"


def _dev(name: str, **attributes) -> SimpleNamespace:
    return SimpleNamespace(name=name, driver=DRIVER, attributes=attributes)


def test_lookup_gives_a_list_as_a_tuple_and_sets_of_its_scalar_type():
    dev = _dev("d", numa={"ints": [0, 1]}, model={"string": "a"}, empty={})
    assert lookup_attribute(dev, f"{DRIVER}/numa") == ("ints", (0, 1))
    assert value_set(lookup_attribute(dev, f"{DRIVER}/numa")) == ("int", frozenset({0, 1}))
    assert value_set(lookup_attribute(dev, f"{DRIVER}/model")) == ("string", frozenset({"a"}))
    assert value_set(lookup_attribute(dev, f"{DRIVER}/empty")) is None  # no known type
    assert value_set(None) is None


def test_sets_meet_on_a_shared_value_of_one_type():
    assert attributes_meet(("int", 1), ("ints", (0, 1)), sets=True)
    assert not attributes_meet(("int", 1), ("ints", (0, 1)), sets=False)
    assert not attributes_meet(("ints", (2,)), ("ints", (0, 1)), sets=True)
    assert not attributes_meet(("bool", True), ("int", 1), sets=True)  # True == 1 in Python
    assert not attributes_meet(("bools", (True,)), ("ints", (1,)), sets=True)
    assert not attributes_meet(("", None), ("", None), sets=True)


def test_match_narrows_the_shared_values_and_never_widens_them_again():
    con = MatchAttribute([], f"{DRIVER}/numa", sets=True)
    a, b, c = (_dev("a", numa={"ints": [0, 1]}), _dev("b", numa={"int": 1}),
               _dev("c", numa={"int": 0}))
    assert con.add("r", "", a) and con.shared == ("int", frozenset({0, 1}))
    assert con.add("r", "", b) and con.shared == ("int", frozenset({1}))
    assert not con.add("r", "", c)
    con.remove("r", "", b)  # a alone is left, but the shared values stay {1} (upstream)
    assert not con.add("r", "", c)
    con.remove("r", "", a)
    assert con.add("r", "", c) and con.shared == ("int", frozenset({0}))  # empty: anew


def test_match_with_sets_refuses_even_a_first_device_of_no_known_type():
    untyped = _dev("u", numa={})
    assert MatchAttribute([], f"{DRIVER}/numa").add("r", "", untyped)  # scalars: taken
    assert not MatchAttribute([], f"{DRIVER}/numa", sets=True).add("r", "", untyped)


def test_distinct_sets_must_be_disjoint_from_each_remembered_one():
    con = DistinctAttribute([], f"{DRIVER}/numa", sets=True)
    assert con.add("a", "", _dev("x", numa={"ints": [0, 1]}))
    assert not con.add("b", "", _dev("y", numa={"ints": [1, 2]}))
    assert con.add("b", "", _dev("z", numa={"ints": [2, 3]}))
    assert not con.add("c", "", _dev("w", numa={"int": 3}))
    assert con.fresh().sets


def _numa_slice(*values) -> list[dict]:
    devices = [{"name": f"d{i}", "attributes": {"numa": value}}
               for i, value in enumerate(values)]
    return [slice_("s", devices)]


def test_golden_match_attribute_on_lists_finds_what_upstream_finds():
    # d0 {0,1}, d1 {1}, d2 {0}, d3 {0}; three requests of one device, one matchAttribute.
    # a=d0, b=d1 leaves {1}, which c cannot meet; b's d1 is taken back but the shared values
    # stay {1}, so b refuses d2 and d3 and a moves on: d1, then d2 ({0}), with b=d0, c=d3.
    # Sets restored on backtracking would have given a=d0, b=d2, c=d3.
    slices = _numa_slice({"ints": [0, 1]}, {"int": 1}, {"int": 0}, {"int": 0})
    c = claim("c", request("a"), request("b"), request("c"),
              constraints=[{"matchAttribute": f"{DRIVER}/numa"}])
    alloc = allocator(slices, gates=LISTS)
    assert picked(alloc.allocate(node(), [c])) == [[("a", "d2"), ("b", "d0"), ("c", "d3")]]


def test_golden_distinct_attribute_on_lists_needs_disjoint_sets():
    slices = _numa_slice({"ints": [0, 1]}, {"ints": [1, 2]}, {"ints": [2, 3]})
    c = claim("c", request("a"), request("b"),
              constraints=[{"distinctAttribute": f"{DRIVER}/numa"}])
    assert picked(allocator(slices, gates=LISTS).allocate(node(), [c])) == [
        [("a", "d0"), ("b", "d2")]]
