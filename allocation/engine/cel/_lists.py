"""Kubernetes' CEL lists library (``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``,
``lastIndexOf``), independent of the CEL library underneath.

resource.k8s.io/v1 selectors compile in Kubernetes' base environment, which has had
``k8s.io/apiserver/pkg/cel/library/lists.go`` since 1.0 (the same at v0.34.9, v0.35.6 and
v0.36.2; master adds ``includes`` at 1.37). It is not cel-go's lists extension (``slice``,
``sort``, ...), which is gated at 1.34 (``_k8s.EXTENSIONS``).

Upstream declares one overload per element type: ``isSorted``, ``min`` and ``max`` on lists
of int, uint, double, bool, duration, timestamp, string and bytes, ``sum`` on int, uint,
double and duration, and ``indexOf``/``lastIndexOf`` on ``list(A)`` with an ``A``. The CEL
library's run time tells overloads apart by argument kind only (every list is a list), so
one implementation serves them all, as cel-go's does (every overload binds the same
function): it follows cel-go's value semantics (``traits.Comparer``, ``Adder``, ``Equal``):

- ``min``/``max``/``isSorted`` keep going past comparisons that fail (NaN, values of
  different types in a ``dyn`` list): only a comparison that says "greater" counts; an
  element that cannot be compared at all (null, a list, a map, a quantity) is "no such
  overload"; ``min`` of an empty list is the error "min called on empty list".
- ``sum`` starts from the zero of the first element's type (int 0 for an empty list, as
  cel-go's run time picks the first overload whose type the list matches) and adds as CEL
  does: int and int (error "integer overflow"), double and double, duration and duration;
  anything else is "no such overload".
- ``indexOf`` compares with CEL's equality (``1 == 1.0``, ``true != 1``, lists and maps by
  value).

The shared implementation cannot know the type the checker chose (an empty list's zero; a
uint, which the CEL library hands Python as a plain int): calls resolved to one uint,
double or duration overload run a function of that type instead (:data:`RETARGETED`,
``_checked``). docs/cel.md "Lists" lists what still differs.

:data:`FUNCTIONS` lists the overloads in ``_k8s.Overload``'s terms (kinds such as
``list(int)``; the hidden ``list(error)`` overload carries the run-time implementation of
``sum``/``min``/``max`` with a ``dyn`` result, see ``_library``); :data:`EXTENDING` the
overloads added to functions an extension already declares (the strings extension's
``indexOf`` and ``lastIndexOf``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

from allocation.engine.cel._k8s import Overload

__all__ = ["FUNCTIONS", "EXTENDING", "HIDDEN", "RETARGETED", "cel_equal", "is_sorted", "list_sum",
           "list_min", "list_max", "index_of", "last_index_of"]

_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1
#: The element kind of the overload that carries an implementation with a ``dyn`` result:
#: no expression has a list of it, so it never changes what type-checks (``_library``).
HIDDEN = "error"
_COMPARABLE = ("int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes")
_SUMMABLE = ("int", "uint", "double", "duration")


def _no_overload(function: str = "") -> ValueError:
    """cel-go's message: with the function when no overload takes the list at all (its run
    time checks the first element's type), without it for a later element."""
    return ValueError(f"no such overload: {function}(list)" if function else "no such overload")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _compare(left: object, right: object) -> int | None:
    """cel-go's ``left.Compare(right)`` (common/types, compare.go): -1, 0 or 1, None for
    the error it gives for NaN or a value of another type."""
    if _is_number(left) and _is_number(right):
        if isinstance(left, float) or isinstance(right, float):
            a, b = float(left), float(right)
            if math.isnan(a) or math.isnan(b):
                return None
        else:
            a, b = left, right
        return (a > b) - (a < b)
    kinds = (bool, str, (bytes, bytearray), timedelta, datetime)
    for kind in kinds:
        if isinstance(left, kind) and isinstance(right, kind):
            return (left > right) - (left < right)
    return None


def _comparable(value: object) -> bool:
    """Whether cel-go's value is a ``traits.Comparer`` (the eight comparable types)."""
    return isinstance(value, (int, float, str, bytes, bytearray, timedelta, datetime))


def cel_equal(left: object, right: object) -> bool:
    """cel-go's ``Equal``: numbers across types (as doubles when one is), no bool/int
    mixing, NaN unequal to itself, lists and maps by value, other values by type and
    value (opaque messages by their canonical text)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if _is_number(left) and _is_number(right):
        return _compare(left, right) == 0
    if isinstance(left, (bytes, bytearray)) and isinstance(right, (bytes, bytearray)):
        return bytes(left) == bytes(right)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(cel_equal, left, right))
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return len(left) == len(right) and all(
            any(cel_equal(key, other) and cel_equal(value, right[other]) for other in right)
            for key, value in left.items())
    return type(left) is type(right) and left == right


def is_sorted(items: list[object]) -> bool:
    """``list.isSorted()``: no element compares greater than the next.

    Raises:
        ValueError: an element that cannot be compared ("no such overload", with
            ``isSorted(list)`` when it is the first).
    """
    previous = None
    for index, item in enumerate(items):
        if not _comparable(item):
            raise _no_overload("" if index else "isSorted")
        if index and _compare(previous, item) == 1:
            return False
        previous = item
    return True


def _extreme(name: str, prefer: int) -> Callable[[list[object]], object]:
    def pick(items: list[object]) -> object:
        """The first element no other is preferred to; ValueError "<name> called on empty
        list", or "no such overload" for an element that cannot be compared."""
        if not items:
            raise ValueError(f"{name} called on empty list")
        result = items[0]
        if not _comparable(result):
            raise _no_overload(name)
        for item in items:
            if not _comparable(item):
                raise _no_overload()
            if _compare(result, item) == prefer:
                result = item
        return result
    return pick


#: ``list.min()`` and ``list.max()``: the first least (greatest) element.
list_min = _extreme("min", 1)
list_max = _extreme("max", -1)


def list_sum(items: list[object]) -> object:
    """``list.sum()``: the zero of the first element's type plus every element.

    Raises:
        ValueError: "integer overflow", "unsigned integer overflow", "no such overload" (an
            element that cannot be added; "no such overload: sum(list)" for the first).
    """
    if not items:
        return 0
    first = items[0]
    if isinstance(first, timedelta):
        total: object = timedelta(0)
    elif _is_number(first):
        total = 0.0 if isinstance(first, float) else 0
    else:
        raise _no_overload("sum")
    unsigned = any(_is_number(item) and item > _INT64_MAX for item in items)
    for item in items:
        total = _add(total, item, unsigned)
    return total


def _add(total: object, item: object, unsigned: bool) -> object:
    """cel-go's ``total.Add(item)`` for the types ``sum`` reaches."""
    if isinstance(total, int) and type(item) is int:
        result = total + item
        if unsigned and not 0 <= result <= _UINT64_MAX:
            raise ValueError("unsigned integer overflow")
        if not unsigned and not _INT64_MIN <= result <= _INT64_MAX:
            raise ValueError("integer overflow")
        return result
    if isinstance(total, float) and type(item) is float:
        return total + item
    if isinstance(total, timedelta) and isinstance(item, timedelta):
        result = total + item
        if abs(result // timedelta(microseconds=1)) * 1000 > _INT64_MAX:  # Go: int64 ns
            raise ValueError("integer overflow")
        return result
    if isinstance(item, timedelta) and isinstance(total, datetime) \
            or isinstance(item, datetime) and isinstance(total, timedelta):
        try:
            return total + item
        except OverflowError:
            raise ValueError("timestamp overflow") from None
    raise _no_overload()


def _typed_sum(zero: object, unsigned: bool = False) -> Callable[[list[object]], object]:
    """``sum`` of a list the checker knows the type of (``RETARGETED``): from its zero."""
    def add_up(items: list[object]) -> object:
        total = zero
        for item in items:
            total = _add(total, item, unsigned)
        return total
    return add_up


def index_of(items: list[object], item: object) -> int:
    """``list.indexOf(x)``: the first index of an element equal to ``x``, or -1."""
    for index, element in enumerate(items):
        if cel_equal(element, item):
            return index
    return -1


def last_index_of(items: list[object], item: object) -> int:
    """``list.lastIndexOf(x)``: the last index of an element equal to ``x``, or -1."""
    for index in range(len(items) - 1, -1, -1):
        if cel_equal(items[index], item):
            return index
    return -1


def _typed(function: str, overload_id: str, types: tuple[str, ...], result: str,
           impl: Callable[..., object]) -> list[Overload]:
    """Upstream's ``templatedOverloads``: one member overload per element type, ids as
    upstream's (``list_int_sum_int``); ``result`` "T" is the element type."""
    return [Overload(function, overload_id.format(t=kind), (f"list:{kind}",),
                     kind if result == "T" else result, True, impl) for kind in types]


def _overloads() -> list[Overload]:
    return [
        *_typed("isSorted", "list_{t}_is_sorted_bool", _COMPARABLE, "bool", is_sorted),
        # The hidden overload first: the run time registers the first of a group.
        Overload("sum", "list_hidden_sum", (f"list:{HIDDEN}",), "dyn", True, list_sum),
        *_typed("sum", "list_{t}_sum_{t}", _SUMMABLE, "T", list_sum),
        Overload("max", "list_hidden_max", (f"list:{HIDDEN}",), "dyn", True, list_max),
        *_typed("max", "list_{t}_max_{t}", _COMPARABLE, "T", list_max),
        Overload("min", "list_hidden_min", (f"list:{HIDDEN}",), "dyn", True, list_min),
        *_typed("min", "list_{t}_min_{t}", _COMPARABLE, "T", list_min),
    ]


#: Calls the checker resolved to one of these overloads run the function it maps to, of
#: that type alone (``_checked.retarget``): an empty ``list(double)`` sums to 0.0, not the
#: shared implementation's int 0, and a uint result is a uint. The names cannot be written.
RETARGETED = {"list_uint_sum_uint": "sum@uint", "list_double_sum_double": "sum@double",
              "list_duration_sum_duration": "sum@duration", "list_uint_min_uint": "min@uint",
              "list_uint_max_uint": "max@uint"}
_RETARGETS = (
    Overload("sum@uint", "sum_uint@", ("list:uint",), "uint", True, _typed_sum(0, True)),
    Overload("sum@double", "sum_double@", ("list:double",), "double", True, _typed_sum(0.0)),
    Overload("sum@duration", "sum_duration@", ("list:duration",), "duration", True,
             _typed_sum(timedelta(0))),
    Overload("min@uint", "min_uint@", ("list:uint",), "uint", True, list_min),
    Overload("max@uint", "max_uint@", ("list:uint",), "uint", True, list_max),
)

#: The overloads of functions no extension declares.
FUNCTIONS: tuple[Overload, ...] = (*_overloads(), *_RETARGETS)
#: ``indexOf``/``lastIndexOf`` on lists, added to the strings extension's functions of the
#: same names. Upstream's ``list(A), A`` is declared ``list(dyn), dyn``: the library's type
#: parameters cannot be given an implementation.
EXTENDING: tuple[Overload, ...] = (
    Overload("indexOf", "list_a_index_of_int", ("list:dyn", "dyn"), "int", True, index_of),
    Overload("lastIndexOf", "list_a_last_index_of_int", ("list:dyn", "dyn"), "int", True,
             last_index_of),
)
