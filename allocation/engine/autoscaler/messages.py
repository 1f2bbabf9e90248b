"""Human messages for ProvisioningRequests and scale-ups: what fits, what blocks, what next.

For example: "9 of 10 pods fit; pod 10 needs 1 device of class gpu; node group gpu-pool is
at maxSize 2".
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from allocation.engine.autoscaler.v1pods import V1Pods
from allocation.engine.objects import DeviceRequest, Pod
from allocation.engine.resolve import plan_claim

if TYPE_CHECKING:
    from allocation.engine.state import ClusterState

__all__ = ["demand", "fit_message", "plural"]


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def demand(state: ClusterState, pod: Pod) -> str:
    """What the pod asks for, in words: "1 device of class gpu and 2 cpu"."""
    parts: list[str] = []
    per_class: Counter[tuple[str, str]] = Counter()
    v1 = V1Pods().claims(state, pod)
    for claim in v1.claims if v1 is not None else ():
        for request in claim.requests:
            _v1_request(per_class, request)
    for pod_claim in pod.claims if v1 is None else ():
        name = pod.claim_name(pod_claim)
        claim = state.get("ResourceClaim", pod.namespace, name)
        if claim is None:
            continue
        plan = plan_claim(state, claim)
        if plan.controller or plan.error or not plan.requests:
            per_class[("claim", claim.class_name)] += 1
            continue
        for request in plan.requests:
            payload = request.payload
            units = getattr(payload, "required", None)
            if units is not None:
                per_class[("unit", claim.class_name)] += int(units)
            else:
                per_class[("device", claim.class_name)] += 1
    for (word, class_name), count in per_class.items():
        parts.append(f"all devices of class {class_name}" if word == "all" else
                     f"{plural(count, word)} of class {class_name}")
    if pod.cpu_milli:
        cpu = pod.cpu_milli / 1000
        parts.append(f"{cpu:g} cpu")
    if pod.memory:
        parts.append(f"{pod.memory / 2**30:g}Gi memory")
    return " and ".join(parts) if parts else "no resources"


def _v1_request(per_class: Counter[tuple[str, str]], request: DeviceRequest) -> None:
    """A v1 request in words: ``count`` devices, all devices, or the first of its
    subrequests' classes that is available ("gpu or cpu-only")."""
    if request.exactly is None:
        per_class[("device", " or ".join(request.class_names))] += 1
    elif request.exactly.get("allocationMode") == "All":
        per_class[("all", request.exactly["deviceClassName"])] += 1
    else:
        per_class[("device", request.exactly["deviceClassName"])] += int(
            request.exactly.get("count", 1))


def fit_message(fit: int, total: int, blocked: int | None = None, needs: str = "",
                why: str = "", notes: list[str] | None = None) -> str:
    """"``fit`` of ``total`` pods fit; pod ``blocked`` needs ...; <notes>"."""
    parts = [f"{fit} of {plural(total, 'pod')} fit" if total != 1 else
             f"{fit} of 1 pod fits"]
    if blocked is not None:
        parts.append(f"pod {blocked} needs {needs}" + (f" ({why})" if why else ""))
    parts.extend(notes or ())
    return "; ".join(parts)
