"""The estimated cost of Kubernetes' CEL libraries (cel/_cost_library.py); whole expressions
through them are in test_cost.py."""

from __future__ import annotations

from allocation.engine.cel._cost_library import library_cost
from allocation.engine.cel._cost_shapes import SCALAR, Shape


def test_a_function_of_no_kubernetes_library_is_left_to_the_caller():
    assert library_cost("size", 1, [Shape("string", 64)]) is None


def test_find_all_builds_its_list_and_find_does_not():
    text, pattern = Shape("string", 64), Shape("string", 4)
    cost, result, built = library_cost("findAll", 2, [text, pattern])
    # matches' charge: ceil(65 x 0.1) x ceil(4 x 0.25) on top of the arguments' 2
    assert (cost, result.kind, result.size, built) == (2 + 7 * 1, "list", 64, True)
    assert library_cost("find", 2, [text, pattern])[1:] == (Shape("string", 64), False)


def test_a_string_list_is_over_any_limit_for_the_lists_library():
    strings = Shape("list", 32, Shape("string", 64))
    cost, result, _built = library_cost("isSorted", 1, [strings])
    assert cost > 10**18 and result == SCALAR
