"""What the cost estimate knows of a value (cel/_cost_shapes.py)."""

from __future__ import annotations

from allocation.engine.cel._cost_shapes import SCALAR, Shape, factor, item_of, key_of, union


def test_a_traversal_is_rounded_up():
    assert (factor(64, 0.1), factor(60, 0.1), factor(0, 0.1)) == (7, 6, 0)


def test_the_union_of_two_lists_fits_either():
    short = Shape("list", 2, Shape("string", 10))
    long = Shape("list", 5, Shape("string", 3))
    both = union(short, long)
    assert (both.kind, both.size, item_of(both).size) == ("list", 5, 10)
    assert union(short, Shape("string", 1)).kind == "dyn"


def test_an_input_container_without_known_parts_is_bounded_by_its_own_size():
    strings = Shape("string", 64)
    assert item_of(strings) == SCALAR
    assert key_of(Shape("map", 32)) == Shape("dyn", 32)
