"""Checks beyond the schemas: rules that relate several fields of one document."""

from __future__ import annotations

from typing import Any

from allocation.engine.cel import CelCompileError, compile_expression, compile_problem
from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.schema import join
from allocation.engine.models import registry
from allocation.engine.objects import provisioning as limits
from allocation.engine.objects.planner import is_v1_slice_spec
from allocation.engine.templates import HANDLE_VARIABLES, OBJECT_VARIABLES, placeholders

__all__ = ["check_document"]


def _numeric_templates(data: dict, problems: ProblemList) -> None:
    """Every ``{{ expression }}`` of every ``celTemplate`` compiles (over ``object``), as the
    engine will evaluate it for each claim of the class."""
    for index, entry in enumerate(data.get("numericParameters") or ()):
        template = entry.get("celTemplate") if isinstance(entry, dict) else None
        if not isinstance(template, str):
            continue  # the schema has said why
        for number, placeholder in enumerate(placeholders(template), start=1):
            try:
                compile_expression(placeholder, OBJECT_VARIABLES)
            except CelCompileError as exc:
                problems.add(f"numericParameters[{index}].celTemplate",
                             f"placeholder {number} {{{{{placeholder}}}}} is not valid CEL: {exc}")


def _resource_class(data: dict, problems: ProblemList) -> None:
    modes = []
    if data.get("structuredParameters") is True:
        modes.append("structuredParameters")
    if data.get("semanticParameters") is True:
        modes.append("semanticParameters")
    if data.get("numericParameters"):
        modes.append("numericParameters")
    if data.get("controllerName"):
        modes.append("controllerName")
    if modes == ["structuredParameters", "semanticParameters"]:
        return  # the two names of one mode
    if not modes:
        problems.add("", "exactly one allocation mode must be set: structuredParameters: true, "
                     "numericParameters, or controllerName")
    elif len(modes) > 1:
        problems.add("", f"exactly one allocation mode may be set, found {', '.join(modes)}")


def _slice_spec(spec: dict, path: str, problems: ProblemList) -> None:
    for model in registry.slice_models():
        if spec.get(model.name) is not None:
            model.check_slice(spec[model.name], join(path, model.name), problems)


def _capacities(instances: Any, path: str, problems: ProblemList) -> None:
    for model in registry.all_models():
        if model.source == "capacity":
            model.check_capacity(instances, path, problems)


def _node_group(data: dict, problems: ProblemList) -> None:
    spec = data["spec"]
    if spec.get("minSize", 0) > spec["maxSize"]:
        problems.add("spec.minSize", f"must not exceed maxSize ({spec['maxSize']})")
    if spec.get("capacityFromNode") and (spec.get("resourceSlices")
                                         or spec.get("resourceCapacities")):
        problems.add("spec.capacityFromNode", "set either capacityFromNode or inline "
                     "resourceSlices/resourceCapacities, not both")
    for index, entry in enumerate(spec.get("resourceSlices") or ()):
        if not is_v1_slice_spec(entry):  # v1 specs: manifests/v1_node_groups.py
            _slice_spec(entry, f"spec.resourceSlices[{index}]", problems)
    for index, entry in enumerate(spec.get("resourceCapacities") or ()):
        _capacities(entry.get("instances"), f"spec.resourceCapacities[{index}].instances",
                    problems)


def _provisioning_request(data: dict, problems: ProblemList) -> None:
    spec = data["spec"]
    key = "parameters" if "parameters" in spec else "Parameters"
    try:
        limits.valid_until(spec.get(key) or {})
    except ValueError as exc:
        problems.add(f"spec.{key}.{limits.VALID_UNTIL}", str(exc))
    # The spec is immutable. A planner reading files sees an update as a status computed
    # for another spec: the digest the planner stored with the status no longer matches.
    recorded = ((data.get("status") or {}).get("statuses") or {}).get(limits.DIGEST_KEY)
    if recorded and recorded != limits.spec_digest(spec):
        problems.add("spec", "field is immutable: the status was computed for a different "
                     f"spec (digest {recorded}); create a new ProvisioningRequest instead "
                     "of editing this one, or drop its status")


def _driver_simulation(data: dict, problems: ProblemList) -> None:
    source = data["spec"].get("requestCount")
    if source:
        try:
            compile_expression(source, OBJECT_VARIABLES)
        except CelCompileError as exc:
            problems.add("spec.requestCount", compile_problem(exc, "expression"))
    template = data["spec"].get("handleData")
    if template:
        for index, placeholder in enumerate(placeholders(template)):
            try:
                compile_expression(placeholder, HANDLE_VARIABLES)
            except CelCompileError as exc:
                problems.add("spec.handleData", f"placeholder {index + 1} "
                             f"{{{{{placeholder}}}}} is not valid CEL: {exc}")


def _container_claims(spec: Any, path: str, problems: ProblemList) -> None:
    """A container may only use claims its pod declares, each once, or each request of
    one once (as the API server says: ``{name: a, request: r}`` and ``{name: a, request: q}``
    are two uses)."""
    if not isinstance(spec, dict):
        return
    declared = {c.get("name") for c in spec.get("resourceClaims") or ()
                if isinstance(c, dict)}
    for group in ("initContainers", "containers"):
        for index, container in enumerate(spec.get(group) or ()):
            resources = container.get("resources") if isinstance(container, dict) else None
            claims = resources.get("claims") if isinstance(resources, dict) else None
            seen: set[tuple] = set()
            for position, claim in enumerate(claims or ()):
                name = claim.get("name") if isinstance(claim, dict) else None
                use = (name, claim.get("request") or "") if isinstance(claim, dict) else None
                if name not in declared:
                    known = ", ".join(sorted(n for n in declared if isinstance(n, str)))
                    problems.add(_claim_path(path, group, index, position),
                                 f"claim {name!r} is not declared in {path}.resourceClaims"
                                 + (f" (declared: {known})" if known else ""))
                elif use in seen:
                    twice = f"request {use[1]!r} of claim {name!r}" if use[1] else \
                        f"claim {name!r}"
                    problems.add(_claim_path(path, group, index, position),
                                 f"duplicate {twice} in this container")
                seen.add(use)


def _scheduling_gates(spec: Any, problems: ProblemList) -> None:
    """Gate names are unique, and a pod bound to a node has none (the API server's
    ``validateSchedulingGates`` and its pod create rule; scheduling/gates.py)."""
    gates = spec.get("schedulingGates") if isinstance(spec, dict) else None
    if not gates:
        return
    seen: set = set()
    for index, gate in enumerate(gates):
        name = gate.get("name") if isinstance(gate, dict) else None
        if name in seen:
            problems.add(f"spec.schedulingGates[{index}].name", f"Duplicate value: {name!r}")
        seen.add(name)
    if spec.get("nodeName"):
        problems.add("spec.nodeName", "Forbidden: cannot be set until all schedulingGates "
                     "have been cleared")


def _claim_path(path: str, group: str, index: int, position: int) -> str:
    """Where a container's claim entry is (built only for a problem: not per pod)."""
    return f"{path}.{group}[{index}].resources.claims[{position}].name"


def check_document(kind: str, data: Any, problems: ProblemList) -> None:
    """Report cross-field problems of a document that passed its schema."""
    if kind == "ResourceClass":
        _resource_class(data, problems)
        _numeric_templates(data, problems)
    elif kind == "NodeResourceSlice":
        _slice_spec(data["spec"], "spec", problems)
    elif kind == "NodeResourceCapacity":
        _capacities(data.get("instances"), "instances", problems)
    elif kind == "NodeGroup":
        _node_group(data, problems)
    elif kind == "DriverSimulation":
        _driver_simulation(data, problems)
    elif kind == "ProvisioningRequest":
        _provisioning_request(data, problems)
    elif kind == "Pod":
        _container_claims(data.get("spec"), "spec", problems)
        _scheduling_gates(data.get("spec"), problems)
    elif kind == "PodTemplate":
        template = data.get("template")
        _container_claims(template.get("spec") if isinstance(template, dict) else None,
                          "template.spec", problems)
