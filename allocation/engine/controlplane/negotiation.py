"""The scheduler's side of the KEP-3063 negotiation, through the pod's PodSchedulingContext.

One scheduling attempt of a pod whose claims need a control-plane controller, following the
seed's pseudo-code:

- nodes that fit everything else are found (capacity, node selector, claims already
  allocated, classes' ``suitableNodes``, structured claims, nodes the drivers reported
  unsuitable); the first 128 become ``potentialNodes``;
- with exactly one claim pending a node is selected at once; with more, only once every
  pending claim has an answer from its driver;
- while the drivers allocate for the selected node the pod waits; when every claim is
  allocated the pod is bound (the selected node first) and the context deleted;
- when no node fits, one allocated delayed-allocation claim of the pod that is not available
  on some node gets ``deallocationRequested`` (the first such claim in pod order: the seed's
  "randomly" made deterministic) and the pod leaves its ``reservedFor``.

``unsuitableNodes`` holds at most 128 nodes, so the scheduler remembers every node a driver
reported for a claim until resources come free (``state.epoch``): on large clusters it then
never offers a rejected node again, and the negotiation always ends.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import TYPE_CHECKING

from allocation.engine.constants import CLAIMS_COMPONENT, NODE_LIST_MAX
from allocation.engine.controlplane.common import (
    DEALLOCATION_REQUESTED,
    POTENTIAL_NODES,
    SELECTED_NODE,
    new_context,
    short_list,
)
from allocation.engine.controlplane.pools import available_on
from allocation.engine.labels import node_selector_matches
from allocation.engine.models import Strategy
from allocation.engine.objects import DriverSimulation
from allocation.engine.scheduling import binding, fit
from allocation.engine.scheduling.binding import context_of
from allocation.engine.scheduling.reasons import (
    MAX_DETAIL_NODES,
    R_CLASS,
    R_UNSUITABLE,
    WAIT_ALLOCATION,
    WAIT_IMMEDIATE,
    WAIT_INFORMATION,
    detail_of,
    missing_controller,
    summary,
)

if TYPE_CHECKING:
    from allocation.engine.allocator import Want
    from allocation.engine.objects import Node, Pod, PodSchedulingContext, ResourceClaim
    from allocation.engine.resolve import ClaimPlan
    from allocation.engine.scheduling.needs import Controlled, PodNeeds
    from allocation.engine.state import ClusterState

__all__ = ["Negotiation"]

Learned = dict[str, set[str]]
"""Nodes the drivers reported unsuitable, by pod claim name."""


def _immediate(needs: PodNeeds) -> bool:
    return any(entry.claim.immediate for entry in needs.controlled)


class Negotiation:
    """The scheduler's half of the negotiation: a ``scheduler.Negotiator``.

    ``rounds`` counts its context updates per pod (``bench/bench_controlplane.py`` reports
    them; ``docs/controlplane.md``).
    """

    def __init__(self, strategy: str = Strategy.FIRST_FIT) -> None:
        self.strategy = strategy
        self.rounds: Counter[str] = Counter()
        self.controllers: set[str] = set()
        self.learned: dict[str, tuple[int, Learned]] = {}

    def begin(self, state: ClusterState) -> None:
        """Called at the start of each scheduler pass."""
        self.controllers = {s.controller_name for s in state.of_kind(DriverSimulation)}

    def blocker(self, claim: ResourceClaim, plan: ClaimPlan) -> str | None:
        """Why an unallocated controller-managed claim cannot be negotiated, or None."""
        controller = plan.controller
        if controller not in self.controllers:
            return missing_controller(claim, plan.resource_class.name, controller)
        return None  # an Immediate claim the driver has not reached yet: the pod waits

    def involved(self, state: ClusterState, pod: Pod) -> bool:
        return context_of(state, pod) is not None

    # -- a pending pod ------------------------------------------------------------------
    def schedule(self, state: ClusterState, pod: Pod, needs: PodNeeds) -> bool:
        """One scheduling attempt; returns whether anything changed."""
        if _immediate(needs):
            return binding.mark_waiting(state, pod, WAIT_IMMEDIATE)
        context = context_of(state, pod)
        pending = needs.controlled
        learned = self._learn(state, pod, context)
        selected = context.selected_node if context is not None else None
        if pending and selected and self._refusal(state, pod, state.nodes.get(selected),
                                                  needs, learned) is None:
            return binding.mark_waiting(state, pod, WAIT_ALLOCATION)
        limit = NODE_LIST_MAX if pending else 1
        fits, counts, details = self._fitting(state, pod, needs, learned, limit,
                                              None if pending else selected)
        if not fits:
            # The selected node does not fit any more: drivers must not allocate for it.
            changed = bool(pending and selected) and self._publish(
                state, pod, context, list(context.potential_nodes), None, pending,
                f"node {selected} no longer fits pod {pod.name}")
            claim = self._deallocation_candidate(state, pod, needs, learned)
            if claim is not None:
                return self._request_deallocation(state, pod, claim)
            if changed:
                return True
            total = len(state.node_order)
            return binding.mark_unschedulable(state, pod, summary(counts, total),
                                              detail_of(details, total))
        if not pending:  # every claim allocated: schedule the pod onto the node
            node = state.nodes[fits[0]]
            picks, _refusal = fit.try_node(state, pod, node, needs, self.strategy)
            binding.commit(state, pod, node, needs, picks)
            self.learned.pop(pod.key, None)
            return True
        informed = len(pending) == 1 or (context is not None and all(
            entry.pod_claim in context.claim_status for entry in pending))
        return self._publish(state, pod, context, fits, fits[0] if informed else None,
                             pending)

    def _learn(self, state: ClusterState, pod: Pod,
               context: PodSchedulingContext | None) -> Learned:
        epoch, learned = self.learned.get(pod.key, (state.epoch, {}))
        if epoch != state.epoch:
            learned = {}
        if context is not None:
            for name, nodes in context.claim_status.items():
                learned.setdefault(name, set()).update(nodes)
        self.learned[pod.key] = (state.epoch, learned)
        return learned

    def _refusal(self, state: ClusterState, pod: Pod, node: Node | None, needs: PodNeeds,
                 learned: Learned, wants: list[Want] | None = None) -> str | None:
        """Why ``node`` cannot take the pod, drivers' reports included, or None."""
        if node is None:
            return "node not found"
        reason = fit.node_refusal(state, pod, node, needs)
        if reason:
            return reason
        for entry in needs.controlled:
            suitable = entry.plan.resource_class.suitable_nodes
            if suitable and not node_selector_matches(suitable, node):
                return R_CLASS
            if node.name in learned.get(entry.pod_claim, ()):
                return R_UNSUITABLE
        # Structured claims of a mixed pod: a dry run, nothing stays taken.
        return fit.claims_fit(state, node, needs.wants if wants is None else wants,
                              self.strategy)

    def _fitting(self, state: ClusterState, pod: Pod, needs: PodNeeds, learned: Learned,
                 limit: int, prefer: str | None) -> tuple[list[str], Counter, list[dict]]:
        order = state.node_order
        if prefer in state.nodes:
            order = [prefer, *(n for n in order if n != prefer)]
        fits: list[str] = []
        counts: Counter[str] = Counter()
        details: list[dict] = []
        wants = needs.wants
        for name in order:
            reason = self._refusal(state, pod, state.nodes[name], needs, learned, wants)
            if reason is None:
                fits.append(name)
                if len(fits) >= limit:
                    break
                continue
            counts[reason] += 1
            if len(details) < MAX_DETAIL_NODES:
                details.append({"node": name, "reason": reason})
        return fits, counts, details

    def _publish(self, state: ClusterState, pod: Pod, context: PodSchedulingContext | None,
                 potential: list[str], selected: str | None, pending: list[Controlled],
                 why: str | None = None) -> bool:
        changed = False
        if context is None:
            context = new_context(pod)
            state.add(context)
            changed = True
        context = state.writable(context)
        names = ", ".join(entry.pod_claim for entry in pending)
        if context.potential_nodes != potential:
            context.potential_nodes = potential
            changed = True
            state.events.record(context, "Normal", POTENTIAL_NODES,
                                f"{len(potential)} potential node(s) for pod {pod.name}, "
                                f"pending claims {names}: {short_list(potential)}")
        if context.selected_node != selected:
            why = why or f"waiting for every driver to report unsuitable nodes for {names}"
            message = (f"Selected node {selected}: drivers allocate claims {names} for it"
                       if selected else f"Cleared selected node {context.selected_node}: {why}")
            context.selected_node = selected
            changed = True
            state.events.record(context, "Normal", SELECTED_NODE, message)
        if changed:
            self.rounds[pod.ref] += 1
        binding.mark_waiting(state, pod, WAIT_ALLOCATION if selected else WAIT_INFORMATION)
        return changed

    # -- recovery -----------------------------------------------------------------------
    def _deallocation_candidate(self, state: ClusterState, pod: Pod, needs: PodNeeds,
                                learned: Learned) -> ResourceClaim | None:
        for claim in needs.allocated:
            if (not claim.controller_name or claim.immediate or claim.deallocation_requested
                    or any(name != pod.name for name in claim.reserved_pods())):
                continue
            others = dataclasses.replace(needs, allocated=[c for c in needs.allocated
                                                           if c is not claim])
            wants = others.wants
            for name in state.node_order:
                node = state.nodes[name]
                if not available_on(claim, node) and self._refusal(
                        state, pod, node, others, learned, wants) is None:
                    return claim
        return None

    def _request_deallocation(self, state: ClusterState, pod: Pod,
                              claim: ResourceClaim) -> bool:
        claim = state.writable(claim)
        claim.deallocation_requested = True
        claim.reserved_for = [r for r in claim.reserved_for if r.get("name") != pod.name]
        state.events.record(claim, "Normal", DEALLOCATION_REQUESTED,
                            f"No node fits pod {pod.name}: the claim is allocated where other "
                            "claims of the pod cannot be; requested deallocation so it can be "
                            "allocated again elsewhere")
        return True

    # -- a bound pod --------------------------------------------------------------------
    def bound(self, state: ClusterState, pod: Pod, node: Node, needs: PodNeeds) -> bool:
        """A pod bound already with unallocated claims: a context with only ``selectedNode``."""
        if _immediate(needs):
            return False  # the driver allocates Immediate claims without a context
        context = context_of(state, pod)
        if context is not None and context.selected_node == node.name \
                and not context.potential_nodes:
            return False
        if context is None:
            context = new_context(pod)
            state.add(context)
        context = state.writable(context)
        context.selected_node = node.name
        context.potential_nodes = []
        self.rounds[pod.ref] += 1
        state.events.record(context, "Normal", SELECTED_NODE,
                            f"Pod {pod.name} is bound to node {node.name} already: drivers "
                            "allocate its pending claims for that node",
                            component=CLAIMS_COMPONENT)
        return True
