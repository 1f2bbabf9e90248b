"""Cross-field rules of the resource.k8s.io/v1 kinds (spec section 1, docs/v1.md).

What the schema cannot say: rules relating several fields, limits that depend on the
Kubernetes release (a profile), CEL selectors compiled as the API server compiles them, and
sizes of opaque JSON. Every rule reports into the document's problem list and never stops
early, so every problem is reported at once. Called only on documents that passed their
schema (``v1_schema``), already converted to v1 and defaulted (``v1_convert``).
"""

from __future__ import annotations

from allocation.engine.cel import CelCompileError, compile_problem
from allocation.engine.cel.device import compile_device_selector
from allocation.engine.cel.releases import check_new_device_selector
from allocation.engine.manifests.common import label_key_problem, label_value_problem
from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.schema import join
from allocation.engine.manifests.schema_base import suggest
from allocation.engine.manifests.v1_attribute_rules import check_device_attributes
from allocation.engine.manifests.v1_claim_status import check_claim_status
from allocation.engine.manifests.v1_names import (
    MAX_COUNTERS,
    MAX_DEVICES,
    MAX_DEVICES_TAINTED,
    MAX_OPAQUE_BYTES,
    check_json_size,
    check_listed_once,
    check_references,
    qualified_name_problem,
    request_names,
)
from allocation.engine.v1.features import Profile

__all__ = ["check_v1_document", "admin_access_paths"]


def _opaque(opaque: dict, path: str, problems: ProblemList) -> None:
    check_json_size(opaque["parameters"], MAX_OPAQUE_BYTES, join(path, "parameters"), problems)


def _selectors(entries: list, path: str, profile: Profile, problems: ProblemList) -> None:
    """Compile each selector as the API server does on create: every document the planner
    reads is a new object, so its selectors are new expressions (docs/v1.md, "Every document
    is a create")."""
    for index, selector in enumerate(entries or ()):
        where = f"{join(path, index)}.cel.expression"
        expression = selector["cel"]["expression"]
        try:
            compile_device_selector(expression, **profile.selector_options)
        except CelCompileError as exc:
            problems.add(where, compile_problem(exc, "selector"))
            continue
        try:
            check_new_device_selector(expression, compatibility=profile.cel_compatibility,
                                      **profile.selector_options)
        except CelCompileError as exc:
            problems.add(where, f"{compile_problem(exc, 'selector')} "
                         f"(Kubernetes {profile.release})")


def _extended_resource_name(name: str, path: str, problems: ProblemList) -> None:
    # Kubernetes' IsExtendedResourceName: a qualified name outside kubernetes.io whose
    # "requests." form is also a qualified name.
    domain, slash, _ = name.partition("/")
    if not slash or domain == "kubernetes.io" or domain.endswith(".kubernetes.io") or \
            label_key_problem(name) or label_key_problem(f"requests.{name}"):
        problems.add(path, f"invalid extended resource name {name!r}: must be <domain>/<name>,"
                     " a qualified name outside kubernetes.io")


def _device_class(data: dict, profile: Profile, problems: ProblemList) -> None:
    spec = data["spec"]
    _selectors(spec.get("selectors"), "spec.selectors", profile, problems)
    for index, config in enumerate(spec.get("config") or ()):
        _opaque(config["opaque"], f"spec.config[{index}].opaque", problems)
    if spec.get("extendedResourceName") is not None:
        _extended_resource_name(spec["extendedResourceName"], "spec.extendedResourceName",
                                problems)


def _set_fields(obj: dict, names: tuple[str, ...], path: str,
                problems: ProblemList) -> list[str]:
    """The node fields ``obj`` sets; ``allNodes``/``perDeviceNodeSelection`` false is no
    choice, and refused, as the API server does (set them true or leave them out)."""
    for name in ("allNodes", "perDeviceNodeSelection"):
        if name in names and obj.get(name) is False:
            problems.add(f"{path}.{name}", "must be true or unset, not false")
    return [n for n in names if obj.get(n) not in (None, False)]


def _one_term(selector: dict | None, path: str, problems: ProblemList) -> None:
    if selector is not None and len(selector["nodeSelectorTerms"]) != 1:
        problems.add(f"{path}.nodeSelectorTerms", "must have exactly 1 term, not "
                     f"{len(selector['nodeSelectorTerms'])}")


def _slice_node_fields(spec: dict, profile: Profile, problems: ProblemList) -> None:
    present = _set_fields(spec, ("nodeName", "nodeSelector", "allNodes",
                                 "perDeviceNodeSelection"), "spec", problems)
    counters_only = spec.get("sharedCounters") and not spec.get("devices") and \
        not profile.legacy_pools
    if len(present) > 1:
        problems.add("spec", "exactly one of nodeName, nodeSelector, allNodes, "
                     f"perDeviceNodeSelection may be set, found {', '.join(present)}")
    elif not present and not counters_only:
        problems.add("spec", "exactly one of nodeName, nodeSelector, allNodes: true, "
                     "perDeviceNodeSelection: true must be set")
    _one_term(spec.get("nodeSelector"), "spec.nodeSelector", problems)
    if spec.get("devices") and spec.get("sharedCounters") and not profile.legacy_pools:
        problems.add("spec", "at most one of devices and sharedCounters may be set "
                     "(Kubernetes 1.35 and later)")


def _conditions(device: dict, path: str, problems: ProblemList) -> None:
    if not device.get("bindingConditions") and not device.get("bindingFailureConditions"):
        return  # nearly every device: nothing below could be reported
    lists = {name: device.get(name) or [] for name in ("bindingConditions",
                                                      "bindingFailureConditions")}
    for name, values in lists.items():
        for index, value in enumerate(values):
            message = label_key_problem(value)
            if message:
                problems.add(f"{path}.{name}[{index}]", message)
        check_listed_once(values, f"{path}.{name}", problems)
    if bool(lists["bindingConditions"]) != bool(lists["bindingFailureConditions"]):
        problems.add(path, "bindingConditions and bindingFailureConditions must be set "
                     "together (both or neither)")
    for value in sorted(set(lists["bindingConditions"]) & set(lists["bindingFailureConditions"])):
        problems.add(f"{path}.bindingFailureConditions", f"{value!r} is also a binding "
                     "condition; the two lists must not overlap")


_PLAIN_FIELDS = frozenset(("name", "attributes", "capacity", "allowMultipleAllocations",
                           "bindsToNode"))
"""A device's fields that no rule below reads apart from ``_attributes``: a device with no
other field (nearly every device of a cluster) has nothing more to check, unless its slice
uses perDeviceNodeSelection."""

_DEVICE_PATHS = tuple(f"spec.devices[{i}]" for i in range(MAX_DEVICES))
"""A slice's device paths, made once (a path per device of every slice otherwise)."""


_DEVICE_NODE_FIELDS = ("nodeName", "nodeSelector", "allNodes")


def _device(device: dict, path: str, per_device: bool, profile: Profile,
            problems: ProblemList) -> None:
    check_device_attributes(device, path, profile, problems)
    if not per_device and _PLAIN_FIELDS.issuperset(device):
        return
    for index, use in enumerate(device.get("consumesCounters") or ()):
        if not use["counters"]:
            problems.add(f"{path}.consumesCounters[{index}].counters", "must name at least "
                         "one counter")
        elif len(use["counters"]) > MAX_COUNTERS:
            problems.add(f"{path}.consumesCounters[{index}].counters", f"has "
                         f"{len(use['counters'])} counters, more than the limit of "
                         f"{MAX_COUNTERS}")
    if per_device:
        node_fields = _set_fields(device, _DEVICE_NODE_FIELDS, path, problems)
        if len(node_fields) != 1:
            problems.add(path, "exactly one of nodeName, nodeSelector, allNodes: true must "
                         "be set when the slice uses perDeviceNodeSelection"
                         + (f", found {', '.join(node_fields)}" if node_fields else ""))
    elif node_fields := [n for n in _DEVICE_NODE_FIELDS if device.get(n) is not None]:
        problems.add(path, f"{', '.join(node_fields)} may only be set when the slice sets "
                     "perDeviceNodeSelection: true")
    _one_term(device.get("nodeSelector"), f"{path}.nodeSelector", problems)
    taints = device.get("taints") or []
    if len(taints) > profile.max_taints:
        problems.add(f"{path}.taints", f"must have at most {profile.max_taints} items, not "
                     f"{len(taints)} (Kubernetes {profile.release})")
    for index, taint in enumerate(taints):
        where = f"{path}.taints[{index}]"
        message = label_key_problem(taint["key"])
        if message:
            problems.add(f"{where}.key", message)
        message = label_value_problem(taint.get("value") or "")
        if message:
            problems.add(f"{where}.value", message)
    _conditions(device, path, problems)


def _resource_slice(data: dict, profile: Profile, problems: ProblemList) -> None:
    spec = data["spec"]
    _slice_node_fields(spec, profile, problems)
    devices = spec.get("devices") or []
    if len(devices) > MAX_DEVICES_TAINTED and any(
            d.get("taints") or d.get("consumesCounters") for d in devices):
        problems.add("spec.devices", f"must have at most {MAX_DEVICES_TAINTED} items when a "
                     f"device has taints or consumesCounters, not {len(devices)}")
    per_device = spec.get("perDeviceNodeSelection") is True
    for index, device in enumerate(devices):
        path = _DEVICE_PATHS[index] if index < MAX_DEVICES else f"spec.devices[{index}]"
        _device(device, path, per_device, profile, problems)
    for index, counter_set in enumerate(spec.get("sharedCounters") or ()):
        count = len(counter_set["counters"])
        if not 1 <= count <= MAX_COUNTERS:
            problems.add(f"spec.sharedCounters[{index}].counters", f"must have 1 to "
                         f"{MAX_COUNTERS} counters, not {count}")
    if profile.legacy_pools and profile.partitionable_devices:
        _slice_local_counters(spec, devices, problems)


def _slice_local_counters(spec: dict, devices: list, problems: ProblemList) -> None:
    """[1.34] A device consumes counters of its own slice's sets: the API server refuses a
    reference to another set or counter, and the 1.34 allocator relies on that. From 1.35
    the sets live in slices of their own and a wrong reference makes the pool invalid
    instead (``v1/pools.py``)."""
    sets = {s["name"]: s["counters"] for s in spec.get("sharedCounters") or ()}
    for index, device in enumerate(devices):
        for use_index, use in enumerate(device.get("consumesCounters") or ()):
            path = f"spec.devices[{index}].consumesCounters[{use_index}]"
            known = sets.get(use["counterSet"])
            if known is None:
                problems.add(f"{path}.counterSet", f"{use['counterSet']!r} must reference a "
                             "counterSet defined in the ResourceSlice sharedCounters"
                             f"{suggest(use['counterSet'], sets)} (Kubernetes 1.34)")
                continue
            for name in use["counters"]:
                if name not in known:
                    problems.add(f"{path}.counters", f"{name!r} must reference a counter "
                                 f"defined in the ResourceSlice sharedCounters (set "
                                 f"{use['counterSet']}){suggest(name, known)} "
                                 "(Kubernetes 1.34)")


def _toleration(toleration: dict, path: str, problems: ProblemList) -> None:
    # The API server's checks only: the API documents "an empty key needs Exists" and
    # "tolerationSeconds only with NoExecute" but checks neither (docs/v1.md), and an empty
    # key with Equal matches the taints of any key with that value.
    key, operator = toleration.get("key") or "", toleration.get("operator")
    value = toleration.get("value") or ""
    if key:
        message = label_key_problem(key)
        if message:
            problems.add(f"{path}.key", message)
    if operator == "Exists" and value:
        problems.add(f"{path}.value", "must be empty when the operator is Exists")
    message = label_value_problem(value)
    if message:
        problems.add(f"{path}.value", message)


def _request_body(request: dict, path: str, profile: Profile, problems: ProblemList) -> None:
    mode, count = request.get("allocationMode"), request.get("count")
    if mode == "ExactCount" and (count is None or count <= 0):
        problems.add(f"{path}.count", f"must be greater than zero for allocationMode "
                     f"ExactCount, not {count}")
    elif mode == "All" and count not in (None, 0):
        problems.add(f"{path}.count", f"must not be set for allocationMode All, not {count}")
    _selectors(request.get("selectors"), f"{path}.selectors", profile, problems)
    for index, toleration in enumerate(request.get("tolerations") or ()):
        _toleration(toleration, f"{path}.tolerations[{index}]", problems)


def _claim_spec(spec: dict, path: str, profile: Profile, problems: ProblemList) -> None:
    devices = spec.get("devices") or {}
    names = request_names(devices)
    for index, request in enumerate(devices.get("requests") or ()):
        where = f"{path}.devices.requests[{index}]"
        if request.get("exactly") is not None:
            _request_body(request["exactly"], f"{where}.exactly", profile, problems)
        for position, sub in enumerate(request.get("firstAvailable") or ()):
            _request_body(sub, f"{where}.firstAvailable[{position}]", profile, problems)
    for index, constraint in enumerate(devices.get("constraints") or ()):
        where = f"{path}.devices.constraints[{index}]"
        check_references(constraint.get("requests"), names, f"{where}.requests", problems)
        for name in ("matchAttribute", "distinctAttribute"):
            if constraint.get(name) is not None:
                message = qualified_name_problem(constraint[name], full=True)
                if message:
                    problems.add(f"{where}.{name}", message)
    for index, config in enumerate(devices.get("config") or ()):
        where = f"{path}.devices.config[{index}]"
        check_references(config.get("requests"), names, f"{where}.requests", problems)
        _opaque(config["opaque"], f"{where}.opaque", problems)


def check_v1_document(kind: str, data: dict, profile: Profile, problems: ProblemList) -> None:
    """Report the cross-field problems of a v1 document that passed its schema."""
    if kind == "DeviceClass":
        _device_class(data, profile, problems)
    elif kind == "ResourceSlice":
        _resource_slice(data, profile, problems)
    elif kind == "ResourceClaim":
        _claim_spec(data["spec"], "spec", profile, problems)
        check_claim_status(data["spec"].get("devices") or {}, data.get("status") or {},
                           problems)
    elif kind == "ResourceClaimTemplate":
        _claim_spec(data["spec"]["spec"], "spec.spec", profile, problems)


def admin_access_paths(kind: str, data: dict) -> list[str]:
    """The paths of every ``adminAccess: true`` of a v1 claim or template (the API server
    then checks the namespace's label)."""
    if kind not in ("ResourceClaim", "ResourceClaimTemplate"):
        return []
    spec, prefix = data["spec"], "spec"
    if kind == "ResourceClaimTemplate":
        spec, prefix = spec["spec"], "spec.spec"
    requests = (spec.get("devices") or {}).get("requests") or ()
    return [f"{prefix}.devices.requests[{i}].exactly.adminAccess"
            for i, r in enumerate(requests) if (r.get("exactly") or {}).get("adminAccess")]
