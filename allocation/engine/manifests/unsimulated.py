"""What a pod asks of kube-scheduler that the planner does not simulate, found at loading
so ``simulate`` can say so (a warning per field, in the problem format) rather than place
the pod where kube-scheduler would refuse it (docs/manifests.md, "Not simulated").

Only filters are named: a rule that only scores nodes (preferred affinity terms,
``ScheduleAnyway`` spread constraints) cannot change a first-fit placement. A workload's
replicas share their fields, so the warnings of one field are said in full for the first
:data:`SHOWN` objects and gathered into one more for the rest (:func:`gathered`): a cluster
exported from a real one does not bury the other warnings under one line per replica.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from allocation.engine.manifests.problems import Problem

if TYPE_CHECKING:
    from allocation.engine.v1.features import Profile

__all__ = ["unsimulated_fields", "unsimulated_kind", "gathered", "field_pattern", "SHOWN",
           "NAMED"]

SHOWN = 3
"""The objects whose warning for one field is said in full."""
NAMED = 5
"""How many of the rest the gathering warning names."""

_AFFINITY = (("podAffinity", "InterPodAffinity's required pod affinity"),
             ("podAntiAffinity", "InterPodAffinity's required pod anti-affinity"))
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def unsimulated_fields(data: dict) -> list[tuple[str, str]]:
    """The fields of a Pod or PodTemplate document that ask for a filter the planner does
    not run: required inter-pod (anti-)affinity, ``DoNotSchedule`` topology spread.

    Returns:
        ``(path, warning)`` pairs; empty for most pods (checked per pod at loading).
    """
    prefix = "spec"
    spec = data.get("spec")
    if data.get("kind") == "PodTemplate":
        prefix, spec = "template.spec", (data.get("template") or {}).get("spec")
    if not isinstance(spec, dict) or not (
            "affinity" in spec or "topologySpreadConstraints" in spec):
        return []
    out = []
    affinity = spec.get("affinity") or {}
    for key, what in _AFFINITY:
        if (affinity.get(key) or {}).get(_REQUIRED):
            out.append((f"{prefix}.affinity.{key}.{_REQUIRED}", _warning(what)))
    for index, constraint in enumerate(spec.get("topologySpreadConstraints") or ()):
        if isinstance(constraint, dict) and constraint.get("whenUnsatisfiable") == "DoNotSchedule":
            out.append((f"{prefix}.topologySpreadConstraints[{index}]",
                        _warning("PodTopologySpread's DoNotSchedule constraint")))
    return out


_KIND_GATES = {"DeviceTaintRule": (("DRADeviceTaintRules", "DRADeviceTaints"),
                                    "its taint is not applied to the devices it selects, so "
                                    "the planner may allocate them where Kubernetes would not")}
"""Per kind of ``kinds.UNSIMULATED_KINDS``: the gates that make Kubernetes act on it, the
first a release knows (1.34 served DeviceTaintRule under DRADeviceTaints), and what the
planner then misses."""


def unsimulated_kind(kind: str, profile: Profile) -> str:
    """The warning for an object of a kind the planner keeps without simulating it
    (``kinds.UNSIMULATED_KINDS``): what it misses when the profile's gate is on, else
    that Kubernetes ignores the object too."""
    gates, missed = _KIND_GATES[kind]
    gate = next((g for g in gates if g in profile.gates), gates[-1])
    if profile.enabled(gate):
        return f"not simulated: {kind} ({gate}); {missed}; kept and written back unchanged"
    return (f"has no effect: feature gate {gate} is off in Kubernetes {profile.release}; "
            "kept and written back unchanged")


def _warning(what: str) -> str:
    return (f"not simulated: {what}; the planner may place the pod where kube-scheduler "
            "would not")


def gathered(warnings: list[tuple[str, Problem]]) -> list[Problem]:
    """Warnings gathered, each given with the key of its group: the field path as the
    document has it (no List prefix) for :func:`unsimulated_fields`, or with its indexes
    left out (:func:`field_pattern`) for a field that every device of a slice may carry.
    Per kind, key and message: the first :data:`SHOWN` as they are, then one at the next
    one's place naming its object, up to :data:`NAMED` - 1 more, and how many others.

    Returns:
        The warnings, grouped in the order each group first appears.
    """
    groups: dict[tuple[str, str, str], list[Problem]] = {}
    for key, problem in warnings:
        groups.setdefault((problem.kind, key, problem.message), []).append(problem)
    out: list[Problem] = []
    for (kind, _key, message), problems in groups.items():
        out.extend(problems[:SHOWN])
        rest = problems[SHOWN:]
        if not rest:
            continue
        objects = list(dict.fromkeys(p.object_ref.partition(" ")[2] for p in rest))
        names = ", ".join(objects[:NAMED])
        others = len(objects) - NAMED
        count = (f"{len(rest)} more {kind} objects set this field" if len(objects) == len(rest)
                 else f"{len(rest)} more such fields in {len(objects)} {kind} object"
                 f"{'s' if len(objects) > 1 else ''}")
        out.append(replace(rest[0], message=(
            f"{message} ({count}: {names}{f', and {others} others' if others > 0 else ''})")))
    return out


def field_pattern(path: str) -> str:
    """``path`` with its list indexes left out (``spec.devices[*].taints``): the key that
    gathers a field repeated on every device or request (:func:`gathered`)."""
    return _INDEX.sub("[*]", path) if "[" in path else path


_INDEX = re.compile(r"\[\d+\]")
