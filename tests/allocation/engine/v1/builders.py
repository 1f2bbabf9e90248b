"""Builders of v1 objects and a small CEL test double for the v1 allocator tests.

The double translates the handful of CEL forms the tests use into Python; the real device
CEL (``allocation.engine.cel.device``) replaces it once merged.
"""

from __future__ import annotations

import re
from fractions import Fraction

from allocation.engine.cel import CelCompileError, CelEvaluationError
from allocation.engine.quantity import Quantity
from allocation.engine.v1 import Allocator, make_profile

DRIVER = "gpu.example.com"


class _Q:
    def __init__(self, value: Fraction) -> None:
        self.value = value

    def compareTo(self, other: _Q) -> int:  # noqa: N802 - CEL's name
        return (self.value > other.value) - (self.value < other.value)


def _quantity(text: str) -> _Q:
    return _Q(Quantity.parse(text).value)


_SUBS = [
    (re.compile(r"device\.attributes\[\"([^\"]+)\"\]\.([A-Za-z_][A-Za-z0-9_]*)"),
     r'_attr("\1", "\2")'),
    (re.compile(r"device\.attributes\[\"([^\"]+)\"\]"), r'_attrs("\1")'),
    (re.compile(r"device\.capacity\[\"([^\"]+)\"\]\.([A-Za-z_][A-Za-z0-9_]*)"),
     r'_cap("\1", "\2")'),
    (re.compile(r"device\.driver"), "_driver"),
    (re.compile(r"device\.allowMultipleAllocations"), "_multi"),
    (re.compile(r"&&"), " and "),
    (re.compile(r"\|\|"), " or "),
    (re.compile(r"!(?!=)"), " not "),
    (re.compile(r"\btrue\b"), "True"),
    (re.compile(r"\bfalse\b"), "False"),
]


class FakeSelector:
    """``matches(driver, device)`` by evaluating the translated expression."""

    def __init__(self, source: str) -> None:
        self.source = source
        text = source
        for pattern, repl in _SUBS:
            text = pattern.sub(repl, text)
        try:
            self._code = compile(text.strip(), "<cel>", "eval")
        except SyntaxError as exc:
            raise CelCompileError(str(exc)) from exc
        self.evaluations = 0

    def matches(self, driver: str, device: dict) -> bool:
        self.evaluations += 1
        attrs = device.get("attributes") or {}
        caps = device.get("capacity") or {}

        def domain_of(name: str) -> tuple[str, str]:
            return name.split("/", 1) if "/" in name else (driver, name)

        def _attrs(domain: str) -> dict:
            out = {}
            for name, value in attrs.items():
                d, ident = domain_of(name)
                if d == domain:
                    out[ident] = next(iter(value.values()))
            return out

        def _attr(domain: str, ident: str):
            values = _attrs(domain)
            if ident not in values:
                raise CelEvaluationError(f"no such key: {ident}")
            return values[ident]

        def _cap(domain: str, ident: str) -> _Q:
            for name, value in caps.items():
                if domain_of(name) == (domain, ident):
                    return _quantity(str(value["value"]))
            raise CelEvaluationError(f"no such key: {ident}")

        env = {"_attr": _attr, "_attrs": _attrs, "_cap": _cap, "_driver": driver,
               "_multi": bool(device.get("allowMultipleAllocations")), "quantity": _quantity}
        try:
            result = eval(self._code, {"__builtins__": {}}, env)  # noqa: S307 - test double
        except TypeError as exc:
            raise CelEvaluationError(f"no such overload: {exc}") from exc
        if not isinstance(result, bool):
            raise CelEvaluationError("expression did not return a bool")
        return result


def fake_compile(expression: str) -> FakeSelector:
    """The test double of ``compile_device_selector``."""
    return FakeSelector(expression)


def device(name: str, **attrs) -> dict:
    """A device with typed attributes (str -> string, bool -> bool, int -> int)."""
    out: dict = {"name": name}
    typed = {}
    for key, value in attrs.items():
        if isinstance(value, bool):
            typed[key] = {"bool": value}
        elif isinstance(value, int):
            typed[key] = {"int": value}
        else:
            typed[key] = {"string": value}
    if typed:
        out["attributes"] = typed
    return out


def slice_(name: str, devices: list[dict], *, node: str | None = "node-1",
           driver: str = DRIVER, pool: str | None = None, generation: int = 1,
           count: int = 1, **spec) -> dict:
    """A ResourceSlice; ``node=None`` with ``allNodes=True`` etc. in ``spec``."""
    body: dict = {"driver": driver,
                  "pool": {"name": pool or node or "pool", "generation": generation,
                           "resourceSliceCount": count}}
    if node is not None and not spec.get("allNodes") and not spec.get("nodeSelector") \
            and not spec.get("perDeviceNodeSelection") and not spec.get("sharedCounters"):
        body["nodeName"] = node
    body.update(spec)
    if devices:
        body["devices"] = devices
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name}, "spec": body}


def device_class(name: str = "gpu", *selectors: str, config: list | None = None) -> dict:
    spec: dict = {"selectors": [{"cel": {"expression": s}} for s in
                                (selectors or (f'device.driver == "{DRIVER}"',))]}
    if config:
        spec["config"] = config
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": name}, "spec": spec}


def request(name: str = "req", cls: str = "gpu", count: int = 1, *selectors: str,
            mode: str = "ExactCount", **extra) -> dict:
    body: dict = {"deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        body["count"] = count
    if selectors:
        body["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    body.update(extra)
    return {"name": name, "exactly": body}


def first_available(name: str, *subs: dict) -> dict:
    return {"name": name, "firstAvailable": [{"name": s["name"], **s["exactly"]} for s in subs]}


def claim(name: str, *requests: dict, constraints: list | None = None,
          config: list | None = None, namespace: str = "default") -> dict:
    devices: dict = {"requests": list(requests or (request(),))}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
            "spec": {"devices": devices}}


def node(name: str = "node-1", **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def allocator(slices: list[dict], classes: list[dict] | None = None, *,
              release: str = "1.36", gates: str = "") -> Allocator:
    return Allocator(make_profile(release, gates), fake_compile, slices=slices,
                     classes=classes if classes is not None else [device_class()])


def picked(outcome) -> list[list[tuple[str, str]]]:
    """``[(request, device), ...]`` per claim of a successful outcome."""
    assert outcome.allocations is not None, outcome.reason
    return [[(r["request"], r["device"]) for r in a["devices"].get("results", [])]
            for a in outcome.allocations]
