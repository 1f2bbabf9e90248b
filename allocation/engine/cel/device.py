"""resource.k8s.io/v1 device selectors: CEL over one device of a ResourceSlice.

The environment is Kubernetes' (``dynamic-resource-allocation/cel/compile.go``, spec
``v1.md`` section 2): one variable ``device`` with ``driver``, ``attributes[domain][id]``,
``capacity[domain][id]`` (a ``kubernetes.Quantity``) and, with consumable capacity,
``allowMultipleAllocations``; the quantity and semver libraries without operator overloads;
the standard extensions. Unlike the seed selectors (``selectors``), a run-time error is an
error, not a non-match: the allocator decides what it means (spec section 2).

Results are cached per selector, keyed on the values the selector reads
(``_analysis.device_reads``), so devices that differ only in unread values are evaluated once.
``docs/cel.md`` ("resource.k8s.io/v1 device selectors") has the details and the deviations.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from allocation.engine.cel import _k8s, _qform
from allocation.engine.cel._analysis import DRIVER_DOMAIN, DeviceRead, device_reads
from allocation.engine.cel._cache import CompiledCache, ResultCache
from allocation.engine.cel._device_checks import (
    COMPREHENSIONS,
    check_literals,
    check_unknown_attributes,
    refuse_internals,
)
from allocation.engine.cel._errors import CelCompileError, CelEvaluationError
from allocation.engine.cel._library import Program, compile_device_program
from allocation.engine.cel._opaque import opaque_value
from allocation.engine.cel.budget import Budget
from allocation.engine.cel.cost import DEVICE_BOUNDS
from allocation.engine.cel.selectors import check_source
from allocation.engine.v1_attribute_types import ATTRIBUTE_TYPES, LIST_ATTRIBUTE_TYPES, item_type

__all__ = ["DeviceSelector", "compile_device_selector"]

_MISSING = ("<missing>",)  # a read value that is absent; tuples never equal a typed value
_ITEM_TYPES = {"int": int, "bool": bool, "string": str}
_Outcome = tuple[bool, Any]  # (True, matched) or (False, error message)
_COMPILED: CompiledCache[DeviceSelector] = CompiledCache()


class DeviceSelector:
    """A compiled v1 device selector, reused for every device; ``estimated_cost`` is its
    estimated worst-case cost for devices within the v1 bounds."""

    __slots__ = ("source", "estimated_cost", "consumable_capacity", "list_type_attributes",
                 "_program", "_budget", "_reads", "_readers", "_one", "_plans", "_cache")

    def __init__(self, source: str, program: Program, budget: Budget,
                 reads: tuple[DeviceRead, ...] | None, consumable_capacity: bool,
                 list_type_attributes: bool = False) -> None:
        self.source = source
        self.estimated_cost = budget.estimated
        self.consumable_capacity = consumable_capacity
        self.list_type_attributes = list_type_attributes
        self._program = program
        self._budget = budget
        self._reads = reads
        self._readers = None if reads is None else tuple(_reader(read) for read in reads)
        # the reader of a selector that reads one value (the usual one): ``matches`` makes
        # its key without calling ``_key``, once per device
        self._one = self._readers[0] if self._readers and len(self._readers) == 1 else None
        self._plans = _plans(reads)
        self._cache: ResultCache[_Outcome] = ResultCache()

    def matches(self, driver: str, device: Mapping[str, Any]) -> bool:
        """Whether ``device`` (a v1 Device as in a ResourceSlice: name, attributes, capacity,
        allowMultipleAllocations, ...) of ``driver`` matches.

        Raises:
            CelEvaluationError: any run-time error: a missing key ("no such key: x"), a type
                mismatch ("no such overload: ..."), a result that is not a bool, a cost over
                the budget, an invalid version or quantity in the device.
        """
        one = self._one
        try:
            key = (one(driver, device),) if one is not None else self._key(driver, device)
            hash(key)
        except (TypeError, AttributeError):  # unhashable or malformed values: not cached
            outcome = self._evaluate(driver, device)
        else:
            outcome = self._cache.get(key, lambda: self._evaluate(driver, device))
        ok, value = outcome
        if not ok:
            raise CelEvaluationError(value)
        return value

    def _key(self, driver: str, device: Mapping[str, Any]) -> Hashable:
        if self._readers is None:
            return (driver, _whole(device, "attributes"), _whole(device, "capacity"),
                    bool(device.get("allowMultipleAllocations")))
        return tuple([read(driver, device) for read in self._readers])

    def _evaluate(self, driver: str, device: Mapping[str, Any]) -> _Outcome:
        try:
            activation = _activation(driver, device, self._plans, self.consumable_capacity,
                                     self._program.quantity_forms)
        except ValueError as error:
            return False, str(error)
        if not self._budget.fixed:
            over = self._budget.check(activation.values())
            if over is not None:
                return False, over
        return self._program.run_bool(activation)

    def __repr__(self) -> str:
        return f"DeviceSelector({self.source!r})"

    @property
    def reads(self) -> tuple[DeviceRead, ...] | None:
        """What the selector reads through ``device``: ``("attributes", domain, id)`` or
        ``("capacity", domain, id)`` (domain None: ``[device.driver]``; id None: the whole
        domain), ``(map,)``, ``("driver",)``...; None when it may read anything."""
        return self._reads


def compile_device_selector(expression: str, *, consumable_capacity: bool = True,
                            list_type_attributes: bool = False) -> DeviceSelector:
    """The v1 device selector for ``expression``, compiled once per distinct source and gates.

    ``consumable_capacity`` is feature gate DRAConsumableCapacity: without it,
    ``device.allowMultipleAllocations`` does not exist. ``list_type_attributes`` is gate
    DRAListTypeAttributes: with it, ``includes`` exists (``_includes``). (A list attribute
    reaches a selector only with the gate on: loading drops the lists of a gate that is off.)

    Raises:
        CelCompileError: longer than 10 KiB, a syntax or type error (message with line and
            column), an unknown function or field, a result that cannot be a bool; without
            ``list_type_attributes``, a comprehension over an attribute or a ``dyn`` result
            (upstream's unknown attribute type: ``_device_checks``); CelCostError (a
            CelCompileError) when the estimated cost exceeds 1,000,000.
    """
    return _COMPILED.get((expression, consumable_capacity, list_type_attributes),
                         lambda: _build(expression, consumable_capacity, list_type_attributes))


def _build(source: str, consumable_capacity: bool, list_type_attributes: bool
           ) -> DeviceSelector:
    check_source(source)
    program = compile_device_program(source, consumable_capacity,
                                     list_type_attributes=list_type_attributes)
    refuse_internals(source)
    check_literals(source)
    if program.result_type not in ("bool", "dyn"):
        raise CelCompileError("must evaluate to bool or the unknown type, not "
                              f"{program.result_type}")
    if not list_type_attributes and (program.result_type == "dyn"
                                     or COMPREHENSIONS.search(source)):
        check_unknown_attributes(source, consumable_capacity)
    budget = Budget(source, {"device": "device"}, DEVICE_BOUNDS)
    return DeviceSelector(source, program, budget, device_reads(source), consumable_capacity,
                          list_type_attributes)


# The values read, as cache keys -----------------------------------------------------------


def _split(name: str, driver: str) -> tuple[str, str]:
    """(domain, id) of a qualified name; a bare id belongs to the driver's domain."""
    domain, slash, ident = name.partition("/")
    return (domain, ident) if slash else (driver, name)


def _typed(field: str, entry: Any) -> Hashable:
    """A cache key for one attribute or capacity entry that keeps types apart (true vs 1)."""
    return (_typed_capacity if field == "capacity" else _typed_attribute)(entry)


def _typed_attribute(entry: Any) -> Hashable:
    """``_typed`` of an attribute entry (a reader of one attribute calls it directly)."""
    if entry is _MISSING:
        return _MISSING
    if type(entry) is dict and len(entry) == 1:
        ((kind, item),) = entry.items()  # the usual {"int": 1}
        if type(item) is list:  # a list-type attribute ({"ints": [1, 2]}): its items typed
            return (kind, list, tuple((type(value), value) for value in item))
        return (kind, type(item), item)
    if isinstance(entry, Mapping):
        return tuple((kind, type(item), item) for kind, item in entry.items())
    return ("raw", repr(entry))


def _typed_capacity(entry: Any) -> Hashable:
    """``_typed`` of a capacity entry (a reader of one capacity calls it directly)."""
    if entry is _MISSING:
        return _MISSING
    # ``type() is dict`` first: a device's usual entry, without the ABC's slower check
    value = entry.get("value") if type(entry) is dict or isinstance(entry, Mapping) else entry
    return ("value", type(value), value)


_Reader = Callable[[str, Mapping[str, Any]], Hashable]


def _reader(read: DeviceRead) -> _Reader:
    """The function giving the cache-key part of one read value for (driver, device)."""
    field = read[0]
    if field == "driver":
        return lambda driver, device: driver
    if field == "allowMultipleAllocations":
        return lambda driver, device: bool(device.get(field))
    if len(read) == 1:
        return lambda driver, device: (driver, _whole(device, field))
    domain, ident = read[1], read[2]
    if ident is None:
        def whole_domain(driver: str, device: Mapping[str, Any]) -> Hashable:
            actual = driver if domain is DRIVER_DOMAIN else domain
            entries = device.get(field) or {}
            return (actual, tuple(sorted(
                (key, _typed(field, entry)) for name, entry in entries.items()
                for dom, key in [_split(name, driver)] if dom == actual)))
        return whole_domain
    qualified = None if domain is DRIVER_DOMAIN else f"{domain}/{ident}"
    typed = _typed_capacity if field == "capacity" else _typed_attribute

    def one(driver: str, device: Mapping[str, Any]) -> Hashable:
        entries = device.get(field) or {}
        # A qualified name wins over the same bare name (the activation files them so).
        entry = entries.get(qualified or f"{driver}/{ident}", _MISSING)
        if entry is _MISSING and (qualified is None or domain == driver):
            entry = entries.get(ident, _MISSING)
        return typed(entry)
    return one


def _whole(device: Mapping[str, Any], field: str) -> Hashable:
    entries = device.get(field) or {}
    return tuple(sorted((name, _typed(field, entry)) for name, entry in entries.items()))


# The activation -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _MapPlan:
    """What of one map (attributes or capacity) goes into the activation: every entry, or
    only the read ones (``ids`` as (domain, id), whole ``domains``), plus the domains added as
    empty maps (``prefill``). A domain may be DRIVER_DOMAIN."""

    everything: bool
    ids: frozenset[tuple[str | None, str]]
    domains: frozenset[str | None]
    prefill: frozenset[str | None]


def _plans(reads: tuple[DeviceRead, ...] | None) -> dict[str, _MapPlan]:
    """Per map, its plan. Only read values are converted, so that an evaluation depends on
    nothing its cache key leaves out. Kubernetes answers any unknown domain with an empty
    map; we can only add the domains the selector names, and only when it never looks at the
    map as a whole (the added keys would show)."""
    plans = {}
    for field in ("attributes", "capacity"):
        mine = [read for read in reads or () if read[0] == field]
        everything = reads is None or (field,) in mine
        named = frozenset(read[1] for read in mine if len(read) == 3)
        plans[field] = _MapPlan(
            everything,
            frozenset((read[1], read[2]) for read in mine if len(read) == 3 and read[2]),
            frozenset(read[1] for read in mine if len(read) == 3 and read[2] is None),
            frozenset() if everything else named)
    return plans


def _activation(driver: str, device: Mapping[str, Any], plans: Mapping[str, _MapPlan],
                consumable_capacity: bool, forms: bool = False) -> dict[str, object]:
    """The CEL variables for ``device`` (quantities with their forms when ``forms``);
    ValueError for a value CEL cannot hold."""
    maps: dict[str, dict[str, dict[str, object]]] = {}
    capacity = _formed_capacity_value if forms else _capacity_value
    for field, convert in (("attributes", _attribute_value), ("capacity", capacity)):
        plan = plans[field]
        resolve = {DRIVER_DOMAIN: driver}
        filed: dict[str, dict[str, object]] = {resolve.get(d, d): {} for d in plan.prefill}
        ids = {(resolve.get(d, d), ident) for d, ident in plan.ids}
        domains = {resolve.get(d, d) for d in plan.domains}
        entries = device.get(field) or {}
        if not isinstance(entries, Mapping):
            raise ValueError(f"device {field}: not a map")
        # Bare names first, so that a qualified name for the same slot wins (as in _reader).
        for name in sorted(entries, key=lambda name: "/" in name):
            domain, ident = _split(name, driver)
            if not (plan.everything or domain in domains or (domain, ident) in ids):
                continue
            try:
                value = convert(entries[name])
            except (ValueError, TypeError, AttributeError, KeyError) as error:
                raise ValueError(f"device {field[:-1] if field == 'attributes' else field} "
                                 f"{name}: {error}") from None
            filed.setdefault(domain, {})[ident] = value
        maps[field] = filed
    activation: dict[str, object] = {
        "device.driver": driver,
        "device.attributes": maps["attributes"],
        "device.capacity": maps["capacity"],
    }
    if consumable_capacity:
        activation["device.allowMultipleAllocations"] = bool(
            device.get("allowMultipleAllocations"))
    return activation


def _attribute_value(entry: Mapping[str, Any]) -> object:
    kinds = [kind for kind in ATTRIBUTE_TYPES if kind in entry]
    if len(kinds) != 1:
        raise ValueError("an attribute needs exactly one of " + ", ".join(ATTRIBUTE_TYPES))
    kind, value = kinds[0], entry[kinds[0]]
    if kind in LIST_ATTRIBUTE_TYPES:  # gate DRAListTypeAttributes: a CEL list
        if type(value) is not list:
            raise ValueError(f"{kind} value {value!r} is not a list")
        return [_scalar_value(item_type(kind), item) for item in value]
    return _scalar_value(kind, value)


def _scalar_value(kind: str, value: object) -> object:
    if kind == "version":
        return opaque_value(_k8s.SEMVER, _k8s.semver_text(value))
    expected = _ITEM_TYPES[kind]
    if type(value) is not expected:
        raise ValueError(f"{kind} value {value!r} has the wrong type")
    if expected is int and not -(2**63) <= value < 2**63:
        raise ValueError(f"int value {value} is out of the int64 range")
    return value


def _capacity_text(entry: Mapping[str, Any]) -> str:
    value = entry["value"]
    if isinstance(value, bool):
        raise ValueError(f"value {value!r} is not a quantity")
    return value if isinstance(value, str) else str(value)


def _capacity_value(entry: Mapping[str, Any]) -> object:
    return opaque_value(_k8s.QUANTITY, _k8s.capacity_text(_capacity_text(entry)))


def _formed_capacity_value(entry: Mapping[str, Any]) -> object:
    """A capacity as the scheduler sees it (``_qform.stored``): parsed from what the API
    server stored, so with that text's form, and the value it holds."""
    text = _capacity_text(entry)
    canonical = _k8s.capacity_text(text)  # the planner's errors for an invalid quantity
    return opaque_value(_k8s.QUANTITY, canonical, _qform.stored(text)[1])
