"""Upstream's homogeneous aggregate literals: every element of a list literal, and every key
and every value of a map literal, of one type.

Kubernetes' base CEL environment adds cel-go's ``ValidateHomogeneousAggregateLiterals``
(k8s.io/apiserver ``pkg/cel/environment/base.go``, every release; cel-go
``cel/validator.go``), so ``[1, "a"]`` and ``{"a": 1, "b": "x"}`` are compile errors
there, "expected type 'int' but found 'string'" at the first element (key, value) of
another type than the first. The CEL library's checker types them ``list(dyn)`` and
``map(string, dyn)`` and compiles them; the types it gave each element are in its checked
expression, which this module reads (``_wire``) to refuse what upstream refuses.

As cel-go's validator: types are compared as ``Type.IsEquivalentType`` does (kind,
parameters, names; an unresolved type parameter equals any other), an optional element
(``[?x]``, ``{?k: v}``) counts as the type it holds, and a literal anywhere inside a call of
``format`` (cel-go's strings extension exempts its argument lists) is not checked. A list
reports its first mismatch only; a map each key and each value that differ (the first, by
position, is the planner's error).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from allocation.engine.cel._wire import (
    EXPR_KINDS,
    Type,
    assignable,
    checked_expression,
    expr_id,
    message_fields,
    packed_varints,
    type_text,
)

__all__ = ["mixed_literal", "may_mix"]

_EXEMPT = frozenset({"format", "cel.@block"})  # cel-go's ext/formatting.go, ext/bindings.go
# Expr fields (cel-spec syntax.proto): id 2; select 5, call 6, list 7, struct 8, comprehension 9
_CALL, _LIST, _STRUCT = 6, 7, 8
_SUBEXPRS = {kind: fields for kind, fields in EXPR_KINDS.items() if kind != _STRUCT}


def may_mix(source: str) -> bool:
    """Whether ``source`` may hold a literal of two or more elements (a cheap test on the
    text, so that most selectors are not serialized): a comma and a bracket or brace."""
    return "," in source and ("[" in source or "{" in source)


def mixed_literal(serialized: bytes) -> tuple[int, str] | None:
    """The first element, key or value (by position) of a list or map literal in the
    checked expression ``serialized`` (an ``Any`` holding a ``CheckedExpr``) whose type
    differs from the first's: (offset in the source, cel-go's message), or None.

    Returns None for a form not foreseen here (the library's checker has the last word).
    """
    try:
        checked = checked_expression(serialized)
        expr, types, positions = checked.expr, dict(checked.types), checked.positions
        _upstream_types(expr, types)  # type: ignore[arg-type]
        found = [(positions.get(at, 0), _message(expected, actual))
                 for at, expected, actual in _mismatches(expr, types, False)]  # type: ignore[arg-type]
    except (ValueError, IndexError, KeyError, TypeError, StopIteration, AttributeError):
        return None
    return min(found) if found else None


def _mismatches(data: bytes, types: dict[int, Type], exempt: bool
                ) -> Iterator[tuple[int, Type, Type]]:
    """(expression id, expected type, found type) of each mismatch in an Expr and below."""
    for number, _wire, value in message_fields(data):
        if not isinstance(value, bytes) or number not in (*_SUBEXPRS, _STRUCT):
            continue
        inner = message_fields(value)
        if number == _CALL:
            name = next((v.decode() for n, _w, v in inner if n == 2), "")  # type: ignore[union-attr]
            exempt = exempt or name in _EXEMPT
        if number == _LIST and not exempt:
            yield from _list_mismatch(inner, types)
        if number == _STRUCT:
            is_map = not any(n == 1 and v for n, _w, v in inner)  # no message name
            entries = [message_fields(v) for n, _w, v in inner if n == 2]  # type: ignore[arg-type]
            if is_map and not exempt:
                yield from _map_mismatches(entries, types)
            for entry in entries:
                for n, _w, v in entry:
                    if n in (3, 4) and isinstance(v, bytes):  # map_key, value
                        yield from _mismatches(v, types, exempt)
            continue
        for sub, _sub_wire, sub_value in inner:
            if sub in _SUBEXPRS[number] and isinstance(sub_value, bytes):
                yield from _mismatches(sub_value, types, exempt)


# Upstream declares ``device.attributes`` as map(string, map(string, any)) (the DRA cel
# package), the library here as map(string, map(string, dyn)): the same to both checkers,
# but not to the validator, which tells ``any`` from ``dyn`` ("expected type 'dyn' but
# found 'any'" for ``[dyn(1), device.attributes["d"].a]``).
_ATTRIBUTES = "device.attributes"
_ANY: Type = ("any",)
_ATTRIBUTE_MAPS: Type = ("map", ("prim", "string"), ("map", ("prim", "string"), _ANY))
_OPTIONAL_READS = frozenset({"_[?_]", "_?._"})
# ``optional.none()`` holds a type parameter, which cel-go's checker binds to the type of
# the list it is in (the library's leaves it dyn): it never differs from its neighbours.
_FREE: Type = ("free",)


def _upstream_types(data: bytes, types: dict[int, Type]) -> Type:
    """Give the expressions of an Expr the types cel-go's checker would where they differ
    from the library's: ``device.attributes`` and what is read from it by index, field or
    optional read (``any``); ``optional.none()`` (free); list and map literals, whose
    element types cel-go joins to the most general one, or ``dyn`` (the library keeps the
    first). Returns the expression's type. (A value bound to a variable,
    ``cel.bind(v, device.attributes["d"].a, ...)``, keeps the library's ``dyn``.)"""
    fields = message_fields(data)
    own_id = expr_id(data)
    found: Type | None = None
    for number, _wire, value in fields:
        if not isinstance(value, bytes):
            continue
        if number == 4:  # an identifier
            if any(n == 1 and v == _ATTRIBUTES.encode() for n, _w, v in message_fields(value)):
                found = _ATTRIBUTE_MAPS
            continue
        if number not in (*_SUBEXPRS, _STRUCT):
            continue
        inner = message_fields(value)
        if number == _STRUCT:
            found = _map_type(inner, types)
            continue
        children = [(sub, _upstream_types(sub_value, types)) for sub, _sw, sub_value in inner
                    if sub in _SUBEXPRS[number] and isinstance(sub_value, bytes)]
        operand = children[0][1] if children and children[0][0] == 1 else None
        if number == _LIST:
            optional = _packed({n: v for n, _w, v in inner if n == 2}.get(2), inner)
            found = ("list", _joined(_held(kind) if index in optional else kind
                                     for index, (_sub, kind) in enumerate(children)))
        elif number == 5 and operand in (_ATTRIBUTE_MAPS, _ATTRIBUTE_MAPS[2]) \
                and not any(n == 3 and v for n, _w, v in inner):  # a field, not has()
            found = operand[2]  # type: ignore[index]
        elif number == _CALL:
            name = next((v.decode() for n, _w, v in inner if n == 2), "")  # type: ignore[union-attr]
            first = next((kind for sub, kind in children if sub == 3), None)
            is_global = not any(sub == 1 for sub, _k in children)
            read = is_global and first in (_ATTRIBUTE_MAPS, _ATTRIBUTE_MAPS[2])
            if read and name == "_[_]":
                found = first[2]  # type: ignore[index]
            elif read and name in _OPTIONAL_READS:
                found = ("abstract", "optional_type", first[2])  # type: ignore[index]
            elif name == "optional.none" and not children:
                found = ("abstract", "optional_type", _FREE)
            elif name == "optional.of" and first is not None and is_global:
                found = ("abstract", "optional_type", first)
            elif name == "@in" and len(children) == 2:
                _bind_free(inner, types)
    if found is not None:
        types[own_id] = found
    return types.get(own_id, ("dyn",))


def _map_type(inner: list, types: dict[int, Type]) -> Type | None:
    """A map literal's type as cel-go's checker gives it (None: a message, or no entry)."""
    keys, values = [], []
    for entry in (message_fields(v) for n, _w, v in inner if n == 2):  # type: ignore[arg-type]
        parts = {n: v for n, _w, v in entry}
        if 3 in parts:
            keys.append(_upstream_types(parts[3], types))  # type: ignore[arg-type]
        if 4 in parts:
            value = _upstream_types(parts[4], types)  # type: ignore[arg-type]
            values.append(_held(value) if parts.get(5) else value)
    if any(n == 1 and v for n, _w, v in inner):
        return None
    return ("map", _joined(keys), _joined(values))


def _joined(kinds: Iterable[Type]) -> Type:
    """cel-go's ``joinTypes`` over a literal's element types, with dynamic aggregate
    element types (the validator, not the checker, refuses mixed literals)."""
    joined: Type | None = None
    for kind in kinds:
        if kind == _FREE:
            continue
        if joined is None:
            joined = kind
        elif assignable(_loose(joined), _loose(kind)):
            joined = joined if _less_specific(joined, kind) else kind
        else:
            joined = ("dyn",)
    return joined if joined is not None else _FREE  # an empty literal's type parameter


def _loose(kind: Type) -> Type:
    """``kind`` with ``any`` and free types read as ``dyn`` (cel-go's ``isDyn``)."""
    if kind in (_ANY, _FREE):
        return ("dyn",)
    return tuple(_loose(part) if isinstance(part, tuple) else part for part in kind)


def _less_specific(left: Type, right: Type) -> bool:
    """cel-go's ``isEqualOrLessSpecific``."""
    if left[0] in ("dyn", "any", "param", "free"):
        return True
    if right[0] in ("dyn", "any", "param", "free") or left[0] != right[0] \
            or len(left) != len(right):
        return False
    return all(_less_specific(a, b) if isinstance(a, tuple) else a == b
               for a, b in zip(left[1:], right[1:], strict=True))


def _bind_free(call: list, types: dict[int, Type]) -> None:
    """``x in [?optional.none(), ...]``: cel-go binds the ``optional.none()`` of the list
    to the type of ``x`` (``@in`` is ``(A, list(A))``)."""
    left, right = (v for n, _w, v in call if n == 3)
    listed = next((v for n, _w, v in message_fields(right) if n == _LIST), None)  # type: ignore[arg-type]
    if listed is None:
        return
    bound = ("abstract", "optional_type", types.get(expr_id(left), ("dyn",)))  # type: ignore[arg-type]
    for element in (v for n, _w, v in message_fields(listed) if n == 1):  # type: ignore[arg-type]
        if types.get(element_id := expr_id(element)) == ("abstract", "optional_type", _FREE):  # type: ignore[arg-type]
            types[element_id] = bound


def _list_mismatch(inner: list, types: dict[int, Type]) -> Iterator[tuple[int, Type, Type]]:
    optional = _packed({n: v for n, _w, v in inner if n == 2}.get(2), inner)
    first: Type | None = None
    for index, element in enumerate(v for n, _w, v in inner if n == 1):
        element_id = expr_id(element)
        kind = _held(types.get(element_id, ("dyn",))) if index in optional else \
            types.get(element_id, ("dyn",))
        if kind == _FREE:
            continue
        if first is None:
            first = kind
        elif not _equivalent(first, kind):
            yield element_id, first, kind
            return
        elif _has_free(first):  # cel-go binds an empty literal's parameters by then
            first = kind


def _has_free(kind: Type) -> bool:
    return kind == _FREE or any(_has_free(part) for part in kind[1:] if isinstance(part, tuple))


def _map_mismatches(entries: list[list], types: dict[int, Type]
                    ) -> Iterator[tuple[int, Type, Type]]:
    first: tuple[Type, Type] | None = None
    for entry in entries:
        parts = {n: v for n, _w, v in entry}
        key_id, value_id = expr_id(parts[3]), expr_id(parts[4])  # type: ignore[arg-type]
        key, value = types.get(key_id, ("dyn",)), types.get(value_id, ("dyn",))
        if parts.get(5):  # an optional entry: its value's type is what the optional holds
            value = _held(value)
        if first is None:
            first = (key, value)
            continue
        if not _equivalent(first[0], key):
            yield key_id, first[0], key
        if not _equivalent(first[1], value):
            yield value_id, first[1], value


def _packed(value: bytes | int | None, inner: list) -> set[int]:
    """The optional indices of a list: packed (one bytes field) or one varint each."""
    if isinstance(value, bytes):
        return set(packed_varints(value))
    return {int(v) for n, w, v in inner if n == 2 and w == 0}  # type: ignore[arg-type]


def _held(kind: Type) -> Type:
    """The type an optional holds (cel-go: ``Parameters()[0]``)."""
    return kind[2] if kind[:2] == ("abstract", "optional_type") and len(kind) > 2 else kind


def _equivalent(left: Type, right: Type) -> bool:
    """cel-go's ``IsEquivalentType``: the same kind, names and parameters; a type
    parameter equals another whatever its name."""
    if left == right or (left[0] == "param" and right[0] == "param") or _FREE in (left, right):
        return True
    if left[0] != right[0] or len(left) != len(right):
        return False
    return all(_equivalent(a, b) if isinstance(a, tuple) else a == b
               for a, b in zip(left[1:], right[1:], strict=True))


def _message(expected: Type, actual: Type) -> str:
    return f"expected type '{type_text(expected)}' but found '{type_text(actual)}'"
