"""A resource.k8s.io/v1 ResourceClaim as the claim page shows it (docs/console-pages.md):
its requests, the allocation's results (request, driver, pool, device, adminAccess,
shareID, consumedCapacity), config and node selector, and the pods it is reserved for."""

from __future__ import annotations

from dataclasses import dataclass

from allocation.engine.objects import ResourceClaimV1
from allocation.engine.state import ClusterState
from allocation.engine.v1.results import allocated_node_name
from allocation.models.claim import claim_status
from allocation.presenters.common import EventRow, events_about, object_url
from allocation.presenters.v1_devices import config_text

__all__ = ["V1Request", "V1Result", "V1ClaimView", "v1_claim_view", "node_selector_text"]


@dataclass(frozen=True, slots=True)
class V1Request:
    """One request (or subrequest, ``req/sub``) of the claim's spec."""

    name: str
    device_class: str
    class_url: str | None
    mode: str
    selectors: tuple[str, ...]
    capacity: tuple[tuple[str, str], ...]
    admin_access: bool


@dataclass(frozen=True, slots=True)
class V1Result:
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool
    share_id: str | None
    consumed: tuple[tuple[str, str], ...]


@dataclass(slots=True)
class V1ClaimView:
    namespace: str
    name: str
    state: str
    requests: list[V1Request]
    constraints: list[str]
    results: list[V1Result]
    config: list[str]
    node_selector: str | None
    node: str | None
    node_url: str | None
    reserved_for: list[tuple[str, str | None]]
    waiting_pods: list[tuple[str, str | None]]
    finalizers: list[str]
    events: list[EventRow]
    v1: bool = True
    """The claim page shows the v1 layout (``claim_detail.html``)."""


def node_selector_text(selector: dict | None) -> str | None:
    """``metadata.name In [n1]``; requirements of a term joined by ``and``, terms by ``or``."""
    if not selector:
        return None
    terms = []
    for term in selector.get("nodeSelectorTerms") or ():
        parts = [f"{r.get('key')} {r.get('operator')}"
                 + (f" [{', '.join(r.get('values') or ())}]" if r.get("values") else "")
                 for r in [*(term.get("matchExpressions") or ()),
                           *(term.get("matchFields") or ())]]
        terms.append(" and ".join(parts))
    return " or ".join(terms) or None


def _request(name: str, body: dict, admin: bool) -> V1Request:
    mode = body.get("allocationMode", "ExactCount")
    if mode == "ExactCount":
        mode = f"ExactCount {body.get('count', 1)}"
    class_name = body.get("deviceClassName", "")
    return V1Request(name, class_name, object_url("DeviceClass", None, class_name), mode,
                     tuple(s["cel"]["expression"] for s in body.get("selectors") or ()
                           if "cel" in s),
                     tuple(sorted((k, str(v)) for k, v in
                                  ((body.get("capacity") or {}).get("requests") or {}).items())),
                     admin)


def _requests(claim: ResourceClaimV1) -> list[V1Request]:
    out = []
    for request in claim.requests:
        if request.exactly is not None:
            out.append(_request(request.name, request.exactly, request.admin_access))
        for sub in request.first_available:
            out.append(_request(f"{request.name}/{sub['name']}", sub, False))
    return out


def _constraint_text(constraint: dict) -> str:
    which = ", ".join(constraint.get("requests") or ()) or "all requests"
    if constraint.get("matchAttribute"):
        return f"matchAttribute {constraint['matchAttribute']} ({which})"
    return f"distinctAttribute {constraint.get('distinctAttribute')} ({which})"


def v1_claim_view(state: ClusterState, namespace: str, name: str) -> V1ClaimView | None:
    """Everything the claim page shows about a v1 claim; None if there is no such v1 claim."""
    claim = state.get("ResourceClaim", namespace, name)
    if not isinstance(claim, ResourceClaimV1):
        return None
    allocation = claim.allocation or {}
    node = allocated_node_name(allocation)
    results = [V1Result(r.get("request", ""), r["driver"], r["pool"], r["device"],
                        bool(r.get("adminAccess")), r.get("shareID"),
                        tuple(sorted((k, str(v)) for k, v in
                                     (r.get("consumedCapacity") or {}).items())))
               for r in claim.results]
    waiting = sorted((pod.name, object_url("Pod", namespace, pod.name)) for pod in state.pods()
                     if pod.namespace == namespace and not pod.node_name and not pod.terminated
                     and any(pod.claim_name(pc) == name for pc in pod.claims))
    return V1ClaimView(
        namespace=namespace, name=name, state=claim_status(claim).lower(),
        requests=_requests(claim), constraints=[_constraint_text(c) for c in claim.constraints],
        results=results,
        config=[config_text(c) for c in (allocation.get("devices") or {}).get("config") or ()],
        node_selector=node_selector_text(allocation.get("nodeSelector")),
        node=node, node_url=object_url("Node", None, node) if node else None,
        reserved_for=[(r.get("name", ""), object_url("Pod", namespace, r.get("name", "")))
                      for r in claim.reserved_for if r.get("resource") == "pods"],
        waiting_pods=waiting, finalizers=list(claim.meta.finalizers),
        events=events_about(state.events.items, "ResourceClaim", namespace, name))
