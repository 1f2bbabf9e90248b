"""ResourceClaims, ResourceClaimTemplates and pods in v1 form (spec ``v1.md`` section 5).

What a claim asks for is resolved exactly as the planner resolves it for allocation
(``resolve.plan_claim``): every ``required`` entry of its ResourceClaimParameters becomes one
``exactly`` request with its rewritten selector; a counter claim (``numericParameters``)
becomes ``count`` unit devices of one instance (``units``: matchAttribute on ``instance``)
or ``capacity.requests.count`` of one multi-allocatable device (``consumable``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from allocation.engine.cel import CelCompileError, compile_device_selector
from allocation.engine.cel.syntax import string_literal
from allocation.engine.convert.classes import opaque_config
from allocation.engine.convert.names import dns_label, label_attribute
from allocation.engine.convert.selectors import RewriteError, rewrite_selector
from allocation.engine.convert.slices import V1
from allocation.engine.objects import ResourceClaim
from allocation.engine.resolve import plan_claim

__all__ = ["claim_spec", "claim_document", "label_selector_expression", "flat_pod_claims",
           "MAX_UNITS"]

MAX_UNITS = 32  # results per claim (spec section 1)
_Warn = Callable[..., None]
_NAMED = re.compile(r"\((.+)\)$")


def _attribute(key: str, driver: str) -> tuple[str, str]:
    """(map expression of the domain, id) for a label key converted by ``label_attribute``."""
    domain, slash, ident = label_attribute(key).rpartition("/")
    return f"device.attributes[{string_literal(domain if slash else driver)}]", ident


def label_selector_expression(selector: Mapping | None, driver: str) -> str | None:
    """CEL for a label selector over the converted instance labels; a missing label is
    guarded (in v1 a missing key is an error that fails scheduling, spec section 2)."""
    if not selector:
        return None
    terms = []
    for key, value in sorted((selector.get("matchLabels") or {}).items()):
        domain, ident = _attribute(key, driver)
        terms.append(f"({string_literal(ident)} in {domain} && {domain}.{ident} == "
                     f"{string_literal(str(value))})")
    for item in selector.get("matchExpressions") or ():
        domain, ident = _attribute(item["key"], driver)
        present = f"{string_literal(ident)} in {domain}"
        values = "[" + ", ".join(string_literal(str(v)) for v in item.get("values") or ()) + "]"
        terms.append({
            "In": f"({present} && {domain}.{ident} in {values})",
            "NotIn": f"!({present} && {domain}.{ident} in {values})",
            "Exists": present,
            "DoesNotExist": f"!({present})",
        }[item["operator"]])
    return " && ".join(terms) or None


def _request_name(label: str, index: int, used: set[str]) -> str:
    named = _NAMED.search(label)
    name = dns_label(named.group(1)) if named else f"req-{index}"
    while name in used:
        name = f"{name}-{index}"
    used.add(name)
    return name


def claim_spec(state, claim: ResourceClaim, types: Mapping[str, Mapping[str, str]],
               counters: str, warn: _Warn, path: str = "spec") -> dict:
    """The v1 claim spec for ``claim`` (a claim, or a template's claim); reports through
    ``warn(path, message, impossible=...)``."""
    if claim.allocation_mode == "Immediate":
        warn(f"{path}.allocationMode", "Immediate has no v1 form: the claim is allocated "
             "with its first pod")
    plan = plan_claim(state, claim)
    rc = plan.resource_class
    if plan.error:
        warn(f"{path}.parametersRef" if rc else f"{path}.resourceClassName", plan.error,
             impossible=True)
        return {}
    if rc.mode == "controller":
        warn(f"{path}.resourceClassName", f"class {rc.name!r} is managed by a control-plane "
             "controller, removed in v1: approximated by one device of its class",
             impossible=True)
        return {"devices": {"requests": [{"name": "req-0", "exactly": {
            "deviceClassName": rc.name}}]}}
    if not plan.shareable and plan.requests:
        warn(f"{path}.parametersRef", "not shareable has no v1 form: every v1 claim can be "
             "shared by up to 256 pods")
    requests, constraints = [], []
    used: set[str] = set()
    for index, request in enumerate(plan.requests):
        name = _request_name(request.label, index, used)
        exactly: dict = {"deviceClassName": rc.name}
        if rc.mode == "numeric":
            _counter_request(request, name, exactly, constraints, counters, path, warn)
        elif request.sources and request.sources[0].strip() != "true":
            try:
                rewritten = rewrite_selector(request.sources[0], request.driver_name,
                                             types.get(request.driver_name, {}))
            except RewriteError as error:
                warn(f"{path}.parametersRef", f"{request.label} selector: {error}",
                     impossible=True)
                continue
            for note in rewritten.notes:
                warn(f"{path}.parametersRef", f"{request.label} selector: {note}")
            exactly["selectors"] = [{"cel": {"expression": rewritten.expression}}]
        requests.append({"name": name, "exactly": exactly})
    devices: dict = {}
    if requests:
        devices["requests"] = requests
    if constraints:
        devices["constraints"] = constraints
    config = opaque_config(rc.driver_name, plan.vendor_claim_parameters,
                           f"{path}.parametersRef", warn)
    if config:
        devices["config"] = config
    return {"devices": devices} if devices else {}


def _counter_request(request, name: str, exactly: dict, constraints: list, counters: str,
                     path: str, warn: _Warn) -> None:
    demand = request.payload
    expression = label_selector_expression(demand.selector, request.driver_name)
    if expression:
        try:
            compile_device_selector(expression)
        except CelCompileError as error:
            warn(f"{path}.parametersRef", f"the label selector's v1 form {expression!r} "
                 f"does not compile: {error}", impossible=True)
        exactly["selectors"] = [{"cel": {"expression": expression}}]
    if counters == "consumable":
        exactly["capacity"] = {"requests": {"count": str(demand.required)}}
        return
    if demand.required > MAX_UNITS:
        warn(f"{path}.parametersRef", f"{demand.required} units are more than the "
             f"{MAX_UNITS} devices of one v1 claim (use --counters consumable)",
             impossible=True)
    if demand.required > 1:
        exactly["count"] = demand.required
        constraints.append({"requests": [name], "matchAttribute":
                            f"{request.driver_name}/instance"})


def flat_pod_claims(spec: dict) -> dict:
    """A pod spec whose ``resourceClaims`` are in the flat form (``source`` removed in
    1.31); other fields unchanged."""
    entries = spec.get("resourceClaims")
    if not entries:
        return spec
    flat = []
    for entry in entries:
        source = entry.get("source") or {}
        item = {key: value for key, value in entry.items() if key != "source"}
        item.update({key: value for key, value in source.items() if value is not None})
        flat.append(item)
    return {**spec, "resourceClaims": flat}


def claim_document(kind: str, raw: dict, spec: dict) -> dict:
    """A v1 ResourceClaim or ResourceClaimTemplate document around a v1 claim spec."""
    meta = raw.get("metadata") or {}
    metadata = {key: meta[key] for key in ("name", "namespace", "labels", "annotations")
                if meta.get(key)}
    if kind == "ResourceClaimTemplate":
        outer = {"spec": spec}
        inner_meta = (raw["spec"] or {}).get("metadata")
        if inner_meta:
            outer["metadata"] = inner_meta
        spec = outer
    return {"apiVersion": V1, "kind": kind, "metadata": metadata, "spec": spec}
