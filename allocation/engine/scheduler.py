"""The scheduler: place pending pods, allocating their claims on the chosen node.

Pods are taken in document order; nodes in name order (spec section 5). To stay fast on large
homogeneous clusters, pods that ask for the same things share a *cursor*: the first node that
may still fit them. Capacity only shrinks while pods are placed, so a node that refused one
pod refuses its twins too; any release of capacity (``state.epoch``) resets the cursors.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from allocation.engine.allocator import Want, explain_node, search
from allocation.engine.constants import EXPLAIN_ANNOTATION, STRUCTURED_FINALIZER
from allocation.engine.controlplane.common import drop_context
from allocation.engine.labels import node_selector_matches
from allocation.engine.objects import Allocation, Node, Pod, ResourceClaim
from allocation.engine.objects.resource import node_selector_for
from allocation.engine.resolve import ClaimPlan, plan_claim

__all__ = ["Scheduler", "MAX_DETAIL_NODES"]

MAX_DETAIL_NODES = 8

R_UNSCHEDULABLE = "node(s) were unschedulable"
R_SELECTOR = "node(s) didn't match Pod's node affinity/selector"
R_CPU = "Insufficient cpu"
R_MEMORY = "Insufficient memory"
R_PODS = "Too many pods"
R_CLAIMS = "cannot allocate all claims"
R_ELSEWHERE = "node(s) had resource claims allocated on other nodes"
R_CLASS = "node(s) didn't match the resource class's suitable nodes"
R_BUDGET = "allocation search gave up (step budget exhausted)"


@dataclass
class _PodNeeds:
    """What one pod needs right now: claims by state, or why it cannot be scheduled at all."""

    allocated: list[ResourceClaim] = field(default_factory=list)
    pending: list[tuple[ResourceClaim, ClaimPlan]] = field(default_factory=list)
    # (pod claim name, claim, plan) of claims a control-plane controller must allocate
    controlled: list[tuple[str, ResourceClaim, ClaimPlan]] = field(default_factory=list)
    error: str | None = None
    signature: tuple = ()

    @property
    def wants(self) -> list[Want]:
        return [Want(claim.ref, request) for claim, plan in self.pending
                for request in plan.requests]


def _allocated_on(claim: ResourceClaim, node: Node) -> bool:
    return claim.allocation is not None and claim.allocation.usable_on(node)


class Scheduler:
    """Schedules pods; ``reconcile`` runs one pass and says whether anything changed."""

    name = "scheduler"

    def __init__(self, strategy: str = "first-fit") -> None:
        self.strategy = strategy
        self.cursors: dict[tuple, tuple[int, int]] = {}
        self.failures: dict[tuple, tuple[int, str, dict]] = {}
        self.plans: dict[str, ClaimPlan] = {}
        # Imported here: the negotiation builds on this module's reasons and methods.
        from allocation.engine.controlplane.negotiation import Negotiation

        self.negotiation = Negotiation(self)

    # -- what a pod needs ---------------------------------------------------------------
    def needs(self, state, pod: Pod) -> _PodNeeds:
        needs = _PodNeeds()
        signature: list = [pod.namespace, tuple(sorted(pod.node_selector.items())),
                           repr(pod.node_affinity), pod.cpu_milli, pod.memory]
        for pod_claim in pod.claims:
            name = pod.claim_name(pod_claim)
            claim = state.get("ResourceClaim", pod.namespace, name)
            if claim is None:
                if pod_claim.template_name and state.get(
                        "ResourceClaimTemplate", pod.namespace, pod_claim.template_name) is None:
                    needs.error = (f"resourceclaimtemplate \"{pod.namespace}/"
                                   f"{pod_claim.template_name}\" not found")
                else:
                    needs.error = f"resourceclaim \"{pod.namespace}/{name}\" not found"
                return needs
            if pod_claim.template_name and claim.owner_pod != pod.name:
                needs.error = (f"resourceclaim \"{claim.ref}\" was not created for the pod "
                               "(it is not owned by it)")
                return needs
            if claim.pending_reason:
                needs.error = claim.pending_reason
                return needs
            reserved = claim.reserved_pods()
            if claim.allocation is not None:
                if claim.deallocation_requested:
                    needs.error = f"resourceclaim \"{claim.ref}\" is being deallocated"
                    return needs
                if (not claim.allocation.shareable and reserved
                        and pod.name not in reserved):
                    needs.error = (f"resourceclaim \"{claim.ref}\" is in use by pod "
                                   f"\"{reserved[0]}\" and is not shareable")
                    return needs
                needs.allocated.append(claim)
                signature.append(("allocated", claim.ref, claim.allocation.node_name))
                continue
            plan = self._plan(state, claim)
            if plan.error:
                needs.error = f"resourceclaim \"{claim.ref}\": {plan.error}"
                return needs
            if plan.controller:
                needs.error = self.negotiation.blocker(claim, plan)
                if needs.error:
                    return needs
                needs.controlled.append((pod_claim.name, claim, plan))
                signature.append(("controlled", claim.ref))
                continue
            needs.pending.append((claim, plan))
            signature.append(("template", plan.key) if claim.owner_pod == pod.name
                             else ("claim", claim.ref))
        needs.signature = tuple(signature)
        return needs

    def _plan(self, state, claim: ResourceClaim) -> ClaimPlan:
        """The claim's plan; claims with the same class and parameters share one per pass."""
        ref = claim.parameters_ref
        key = (claim.namespace, claim.class_name, tuple(sorted(ref.items())) if ref else None)
        plan = self.plans.get(key)
        if plan is None:
            plan = self.plans[key] = plan_claim(state, claim)
        return plan

    # -- one node -----------------------------------------------------------------------
    def node_refusal(self, state, pod: Pod, node: Node, needs: _PodNeeds,
                     check_capacity: bool = True) -> str | None:
        """Why ``node`` cannot take ``pod`` before trying its claims, or None."""
        if check_capacity:
            if node.unschedulable:
                return R_UNSCHEDULABLE
            labels = node.meta.labels
            for key, value in pod.node_selector.items():
                if labels.get(key) != value:
                    return R_SELECTOR
            if pod.node_affinity and not node_selector_matches(pod.node_affinity, node):
                return R_SELECTOR
            used = state.usage_of(node.name)
            if node.cpu_milli is not None and used.cpu_milli + pod.cpu_milli > node.cpu_milli:
                return R_CPU
            if node.memory is not None and used.memory + pod.memory > node.memory:
                return R_MEMORY
            if used.pods + 1 > node.max_pods:
                return R_PODS
        for claim in needs.allocated:
            if not _allocated_on(claim, node):
                return R_ELSEWHERE
        for _claim, plan in needs.pending:
            suitable = plan.resource_class.suitable_nodes if plan.resource_class else None
            if suitable and not node_selector_matches(suitable, node):
                return R_CLASS
        return None

    def try_node(self, state, pod: Pod, node: Node, needs: _PodNeeds,
                 check_capacity: bool = True) -> tuple[list | None, str | None]:
        """Picks for the pod's pending claims on ``node`` (kept taken), or the refusal."""
        refusal = self.node_refusal(state, pod, node, needs, check_capacity)
        if refusal:
            return None, refusal
        wants = needs.wants
        if not wants:
            return [], None
        picks, exhausted = search(state.inventory_index, node.name, wants, self.strategy)
        if picks is None:
            return None, R_BUDGET if exhausted else R_CLAIMS
        return picks, None

    # -- committing ---------------------------------------------------------------------
    def commit(self, state, pod: Pod, node: Node, needs: _PodNeeds, picks: list) -> None:
        """Record the allocations in the claims, reserve them, bind the pod."""
        pod = state.writable(pod)  # a fork changes its own copy (ClusterState.fork)
        by_owner: dict[str, list] = {}
        for want, pick in zip(needs.wants, picks, strict=True):
            by_owner.setdefault(want.owner, []).append(pick)
        for claim, plan in needs.pending:
            allocate(state, claim, plan, node.name, by_owner.get(claim.ref, []))
        for claim in [*needs.allocated, *(c for c, _ in needs.pending)]:
            reserve(state, claim, pod)
        if pod.node_name != node.name:
            pod.node_name = node.name
            state.charge(pod, node.name, +1)
            state.events.record(pod, "Normal", "Scheduled",
                                f"Successfully assigned {pod.ref} to {node.name}")
        pod.set_condition({"type": "PodScheduled", "status": "True",
                           "lastTransitionTime": state.clock.stamp()})
        pod.meta.annotations.pop(EXPLAIN_ANNOTATION, None)
        drop_context(state, pod)  # seed 004: the scheduler deletes the PodSchedulingContext

    # -- the pass -----------------------------------------------------------------------
    def reconcile(self, state) -> bool:
        changed = False
        self.plans = {}
        self.negotiation.begin(state)
        for pod in list(state.pods()):
            if pod.terminated:
                continue
            if pod.node_name:
                changed |= self._bound_pod(state, pod)
            else:
                changed |= self._schedule(state, pod)
        return changed

    def _bound_pod(self, state, pod: Pod) -> bool:
        """A pod bound already (seed 004): its claims are allocated for its node."""
        needs = self.needs(state, pod)
        node = state.nodes.get(pod.node_name)
        reserved_all = all(pod.name in c.reserved_pods() for c in needs.allocated)
        if needs.controlled and needs.error is None and node is not None:
            return self.negotiation.bound(state, pod, node, needs)
        if (needs.error is None and not needs.pending and reserved_all
                and not self.negotiation.involved(state, pod)):
            return False
        if needs.error is not None or node is None:
            return self._mark_unschedulable(state, pod, needs.error or "node not found", {})
        picks, refusal = self.try_node(state, pod, node, needs, check_capacity=False)
        if picks is None:
            detail = {"nodes": [self._node_detail(state, node, needs, refusal)]}
            return self._mark_unschedulable(state, pod, f"pod is bound to {node.name}, where "
                                            f"its claims cannot be allocated: {refusal}", detail)
        self.commit(state, pod, node, needs, picks)
        return True

    def _schedule(self, state, pod: Pod) -> bool:
        needs = self.needs(state, pod)
        total = len(state.node_order)
        if needs.error is not None:
            return self._mark_unschedulable(
                state, pod, f"0/{total} nodes are available: {needs.error}.", {})
        if needs.controlled or self.negotiation.involved(state, pod):
            return self.negotiation.schedule(state, pod, needs)
        key = needs.signature
        failure = self.failures.get(key)
        if failure is not None and failure[0] == state.epoch:
            return self._mark_unschedulable(state, pod, failure[1], failure[2])
        cursor = self.cursors.get(key)
        start = cursor[1] if cursor is not None and cursor[0] == state.epoch else 0
        nodes = state.nodes
        for index in range(start, total):
            node = nodes[state.node_order[index]]
            picks, _refusal = self.try_node(state, pod, node, needs)
            if picks is not None:
                self.cursors[key] = (state.epoch, index)
                self.commit(state, pod, node, needs, picks)
                return True
        message, detail = self._explain(state, pod, needs)
        self.failures[key] = (state.epoch, message, detail)
        self.cursors[key] = (state.epoch, total)
        return self._mark_unschedulable(state, pod, message, detail)

    # -- explaining ---------------------------------------------------------------------
    def _node_detail(self, state, node: Node, needs: _PodNeeds, reason: str | None) -> dict:
        entry: dict = {"node": node.name, "reason": reason}
        if reason in (R_CLAIMS, R_BUDGET):
            entry["requests"] = explain_node(state.inventory_index, node.name, needs.wants,
                                             self.strategy)
        return entry

    def _explain(self, state, pod: Pod, needs: _PodNeeds) -> tuple[str, dict]:
        counts: Counter[str] = Counter()
        details = []
        for name in state.node_order:
            node = state.nodes[name]
            picks, reason = self.try_node(state, pod, node, needs)
            if picks is not None:  # cannot happen after a failed scan; keep state clean
                for want, (inventory, candidate) in zip(needs.wants, picks, strict=True):
                    inventory.release(candidate, want.owner)
                reason = "fits now"
            counts[reason] += 1
            if len(details) < MAX_DETAIL_NODES:
                details.append(self._node_detail(state, node, needs, reason))
        parts = [f"{n} {r}" for r, n in sorted(counts.items(), key=lambda i: (-i[1], i[0]))]
        message = f"0/{len(state.node_order)} nodes are available"
        message += (": " + ", ".join(parts) + ".") if parts else "."
        detail = {"nodes": details}
        if len(state.node_order) > MAX_DETAIL_NODES:
            detail["omittedNodes"] = len(state.node_order) - MAX_DETAIL_NODES
        return message, detail

    def _mark_unschedulable(self, state, pod: Pod, message: str, detail: dict) -> bool:
        pod = state.writable(pod)
        explain = json.dumps({"summary": message, **detail}, sort_keys=True)
        changed = pod.set_condition({"type": "PodScheduled", "status": "False",
                                     "reason": "Unschedulable", "message": message,
                                     "lastTransitionTime": state.clock.stamp()})
        if pod.meta.annotations.get(EXPLAIN_ANNOTATION) != explain:
            pod.meta.annotations[EXPLAIN_ANNOTATION] = explain
        if changed:
            state.events.record(pod, "Warning", "FailedScheduling", message)
        return False  # recording a failure is not progress


def allocate(state, claim: ResourceClaim, plan: ClaimPlan, node_name: str, picks: list) -> None:
    """Write a structured allocation of ``picks`` on ``node_name`` into ``claim``."""
    claim = state.writable(claim)
    handles = []
    grouped: dict[tuple[str, str], list] = {}
    models = {}
    for inventory, candidate in picks:
        key = (inventory.driver_name, inventory.model.name)
        grouped.setdefault(key, []).append(candidate)
        models[key] = inventory.model
    for (driver, model_name), candidates in grouped.items():
        handles.append({"driverName": driver, "structuredData": {
            "vendorClassParameters": plan.vendor_class_parameters,
            "vendorClaimParameters": plan.vendor_claim_parameters,
            "nodeName": node_name, model_name: models[(driver, model_name)].encode_result(
                candidates)}})
        for data in (handles[-1]["structuredData"],):
            for field_name in ("vendorClassParameters", "vendorClaimParameters"):
                if data[field_name] is None:
                    del data[field_name]
    claim.allocation = Allocation(handles=handles, shareable=plan.shareable,
                                  node_name=node_name,
                                  available_on_nodes=node_selector_for(node_name),
                                  picks=list(picks))
    claim.driver_name = plan.resource_class.driver_name
    finalizers = {m.finalizer for m in models.values()} or {
        STRUCTURED_FINALIZER}
    for finalizer in sorted(finalizers):
        if finalizer not in claim.meta.finalizers:
            claim.meta.finalizers.append(finalizer)
    claim.pending_reason = None
    state.events.record(claim, "Normal", "Allocated",
                        f"Allocated on node {node_name}"
                        + (": " + ", ".join(c.id for _, c in picks) if picks else ""))


def reserve(state, claim: ResourceClaim, pod: Pod) -> None:
    """Add ``pod`` to the claim's ``reservedFor`` if it is not there yet."""
    claim = state.writable(claim)
    if pod.name not in claim.reserved_pods():
        claim.reserved_for.append({"resource": "pods", "name": pod.name, "uid": pod.meta.uid})
