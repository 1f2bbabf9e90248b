"""Claims, pods and ProvisioningRequests as their pages show them."""

from __future__ import annotations

from dataclasses import dataclass, field

from allocation.engine.constants import DEFAULT_SCHEDULER, EXPLAIN_ANNOTATION
from allocation.engine.models import registry
from allocation.engine.objects import Pod, PodTemplate, ProvisioningRequest, ResourceClaim
from allocation.engine.scheduling.diagnosis_text import affinity_terms
from allocation.engine.state import ClusterState
from allocation.models.claim import claim_status
from allocation.presenters.common import (
    ConditionView,
    EventRow,
    bytes_text,
    condition_views,
    cpu_text,
    events_about,
    object_url,
)
from allocation.presenters.diagnosis import Diagnosis, pod_diagnosis
from allocation.presenters.explain import Explanation, explain_pod
from allocation.presenters.negotiation import Timeline, timeline_for
from allocation.presenters.status import pod_state
from allocation.services.read_model import pending_reason

__all__ = ["AllocatedItem", "ClaimView", "PodClaimRow", "PodView", "PodSetRow",
           "ProvisioningView", "claim_view", "pod_view", "provisioning_view", "claim_state"]


@dataclass(frozen=True, slots=True)
class AllocatedItem:
    """One thing an allocation holds: a device, a partition leaf or counter units."""

    driver: str
    model: str
    id: str
    count: int | None = None


@dataclass(slots=True)
class ClaimView:
    namespace: str
    name: str
    state: str
    class_name: str
    class_mode: str | None
    allocation_mode: str
    parameters: str | None
    node: str | None
    node_url: str | None
    items: list[AllocatedItem]
    handle_data: list[str]
    shareable: bool
    reserved_for: list[tuple[str, str | None]]
    waiting_pods: list[tuple[str, str | None]]
    owner_pod: tuple[str, str | None] | None
    controller: str | None
    deallocation_requested: bool
    finalizers: list[str]
    events: list[EventRow]


def claim_state(claim: ResourceClaim) -> str:
    """``reserved``, ``allocated``, ``deallocating`` or ``pending`` in one word."""
    if claim.allocation is None:
        return "pending"
    if claim.deallocation_requested:
        return "deallocating"
    return "reserved" if claim.reserved_for else "allocated"


def _items(claim: ResourceClaim) -> tuple[list[AllocatedItem], list[str]]:
    items, data = [], []
    for handle in claim.allocation.handles if claim.allocation else ():
        structured = handle.get("structuredData") or {}
        for model in registry.all_models():
            value = structured.get(model.name)
            if value:
                items.extend(AllocatedItem(str(handle.get("driverName", "")), model.name,
                                           str(i.get("id")), i.get("count"))
                             for i in model.result_items(value))
        if handle.get("data"):
            data.append(f"{handle.get('driverName', '')}: {handle['data']}")
    return items, data


def _pod_link(namespace: str | None, name: str) -> tuple[str, str | None]:
    return name, object_url("Pod", namespace, name)


def claim_view(state: ClusterState, namespace: str, name: str) -> ClaimView | None:
    claim = state.get("ResourceClaim", namespace, name)
    if not isinstance(claim, ResourceClaim):
        return None
    rc = state.get("ResourceClass", None, claim.class_name)
    node = claim.allocation.node_name if claim.allocation else None
    ref = claim.parameters_ref
    items, data = _items(claim)
    waiting = []
    for pod in state.pods():
        if pod.namespace != namespace or pod.node_name or pod.terminated:
            continue
        if any(pod.claim_name(pc) == name for pc in pod.claims):
            waiting.append(_pod_link(namespace, pod.name))
    return ClaimView(
        namespace=namespace, name=name, state=claim_state(claim), class_name=claim.class_name,
        class_mode=getattr(rc, "mode", None), allocation_mode=claim.allocation_mode,
        parameters=f"{ref.get('kind')} {ref.get('name')}" if ref else None,
        node=node, node_url=object_url("Node", None, node) if node else None,
        items=items, handle_data=data,
        shareable=bool(claim.allocation and claim.allocation.shareable),
        reserved_for=[_pod_link(namespace, p) for p in claim.reserved_pods()],
        waiting_pods=sorted(waiting),
        owner_pod=_pod_link(namespace, claim.owner_pod) if claim.owner_pod else None,
        controller=claim.controller_name, deallocation_requested=claim.deallocation_requested,
        finalizers=list(claim.meta.finalizers),
        events=events_about(state.events.items, "ResourceClaim", namespace, name))


@dataclass(slots=True)
class PodClaimRow:
    pod_claim: str
    claim: str
    url: str | None
    state: str
    from_template: str | None


@dataclass(slots=True)
class PodView:
    namespace: str
    name: str
    phase: str
    node: str | None
    node_url: str | None
    cpu: str
    memory: str
    node_selector: dict[str, str]
    claims: list[PodClaimRow]
    conditions: list[ConditionView]
    reason: str | None
    explanation: Explanation | None
    events: list[EventRow]
    timeline: Timeline | None
    annotations: dict[str, str] = field(default_factory=dict)
    state: str = "pending"  # in the status vocabulary (presenters/status.py)
    node_affinity: list[str] = field(default_factory=list)  # required terms, in words
    diagnosis: Diagnosis | None = None  # every filter on every node, for a pending pod
    scheduling_gates: list[str] = field(default_factory=list)  # names (scheduling/gates.py)
    scheduler: str | None = None  # spec.schedulerName when not kube-scheduler's


def pod_view(state: ClusterState, namespace: str, name: str) -> PodView | None:
    pod = state.get("Pod", namespace, name)
    if not isinstance(pod, Pod):
        return _left_out_pod(state, namespace, name)
    rows = []
    for pc in pod.claims:
        claim_name = pod.claim_name(pc)
        claim = state.get("ResourceClaim", namespace, claim_name)
        rows.append(PodClaimRow(pc.name, claim_name,
                                object_url("ResourceClaim", namespace, claim_name)
                                if claim else None,
                                claim_state(claim) if isinstance(claim, ResourceClaim)
                                else claim_status(claim).lower() if claim  # a v1 claim
                                else "not created yet", pc.template_name))
    pending = not pod.node_name and not pod.terminated
    reason = pending_reason(pod) if pending else None
    explanation = explain_pod(pod.meta.annotations, reason or "") if pending else None
    # every filter on every node, when the scheduler tried nodes and found none
    diagnosis = pod_diagnosis(state, pod) if explanation and explanation.nodes else None
    if diagnosis is not None:
        explanation.suggestions += [s for s in diagnosis.suggestions
                                    if s not in explanation.suggestions]
    # Scheduling annotations stay on the page only while they explain something.
    shown = {k: v for k, v in pod.meta.annotations.items() if k != EXPLAIN_ANNOTATION}
    return PodView(
        namespace=namespace, name=name,
        phase=pod.phase or "Pending", state=pod_state(pod),
        node=pod.node_name, node_url=object_url("Node", None, pod.node_name)
        if pod.node_name else None,
        cpu=cpu_text(pod.cpu_milli), memory=bytes_text(pod.memory),
        node_selector=dict(pod.node_selector), claims=rows,
        conditions=condition_views(pod.conditions), reason=reason,
        explanation=explanation,
        events=events_about(state.events.items, "Pod", namespace, name),
        timeline=timeline_for(state, namespace, name), annotations=shown,
        node_affinity=affinity_terms(pod.node_affinity),
        diagnosis=diagnosis,
        scheduling_gates=[str(g.get("name")) for g in pod.scheduling_gates
                          if isinstance(g, dict)],
        scheduler=pod.scheduler_name if pod.scheduler_name != DEFAULT_SCHEDULER else None)


def _left_out_pod(state: ClusterState, namespace: str, name: str) -> PodView | None:
    """A stored pod the baseline had to leave out (its row cannot be loaded; see
    ``services/store.py``): its page says why instead of failing; None if there is none."""
    problem = next((p for p in state.problems if p.kind == "Pod" and p.name == name
                    and p.namespace == namespace), None)
    if problem is None:
        return None
    return PodView(namespace=namespace, name=name, phase="Unknown", node=None, node_url=None,
                   cpu="-", memory="-", node_selector={}, claims=[], conditions=[],
                   reason=f"The stored pod cannot be loaded, so the planner leaves it out: "
                          f"{problem}", explanation=None,
                   events=events_about(state.events.items, "Pod", namespace, name),
                   timeline=None)


@dataclass(slots=True)
class PodSetRow:
    template: str
    count: int
    exists: bool
    requests: str


@dataclass(slots=True)
class ProvisioningView:
    namespace: str
    name: str
    class_name: str
    canonical_class: str
    parameters: dict[str, str]
    pod_sets: list[PodSetRow]
    conditions: list[ConditionView]
    statuses: dict[str, str]
    events: list[EventRow]


def _template_requests(template: PodTemplate | None) -> str:
    if template is None:
        return ""
    pod = Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": template.name},
               "spec": (template.template or {}).get("spec") or {}})
    claims = ", ".join(pc.claim_name or pc.template_name or pc.name for pc in pod.claims)
    text = f"cpu {cpu_text(pod.cpu_milli)}, memory {bytes_text(pod.memory)}"
    return f"{text}, claims: {claims}" if claims else text


def provisioning_view(state: ClusterState, namespace: str, name: str
                      ) -> ProvisioningView | None:
    request = state.get("ProvisioningRequest", namespace, name)
    if not isinstance(request, ProvisioningRequest):
        return None
    sets = []
    for pod_set in request.pod_sets:
        template_name = str((pod_set.get("podTemplateRef") or {}).get("name", ""))
        template = state.get("PodTemplate", namespace, template_name)
        sets.append(PodSetRow(template_name, int(pod_set.get("count") or 0),
                              template is not None,
                              _template_requests(template if isinstance(template, PodTemplate)
                                                 else None)))
    return ProvisioningView(
        namespace=namespace, name=name, class_name=request.class_name,
        canonical_class=request.canonical_class, parameters=dict(request.parameters),
        pod_sets=sets, conditions=condition_views(request.conditions),
        statuses=dict(request.statuses),
        events=events_about(state.events.items, "ProvisioningRequest", namespace, name))
