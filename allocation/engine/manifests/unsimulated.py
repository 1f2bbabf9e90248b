"""What a pod asks of kube-scheduler that the planner does not simulate, found at loading
so ``simulate`` can say so (a warning per field, in the problem format) rather than place
the pod where kube-scheduler would refuse it (docs/manifests.md, "Not simulated").

Only filters are named: a rule that only scores nodes (preferred affinity terms,
``ScheduleAnyway`` spread constraints) cannot change a first-fit placement.
"""

from __future__ import annotations

__all__ = ["unsimulated_fields"]

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


def _warning(what: str) -> str:
    return (f"not simulated: {what}; the planner may place the pod where kube-scheduler "
            "would not")
