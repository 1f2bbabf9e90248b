"""Fitting one pod on one node: the node's own checks, then a search of its inventories.

:func:`try_node` keeps what it found taken (the caller commits or releases it);
:func:`dry_run` and :func:`claims_fit` release it again, so asking never changes the state.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from allocation.engine.allocator import Want, explain_node, search
from allocation.engine.labels import node_selector_matches
from allocation.engine.objects import DeviceClass
from allocation.engine.scheduling.reasons import (
    CLAIM_REASONS,
    R_BUDGET,
    R_CLAIMS,
    R_CLASS,
    R_CPU,
    R_ELSEWHERE,
    R_MEMORY,
    R_PODS,
    R_SELECTOR,
    R_UNSCHEDULABLE,
    insufficient,
    joined,
    taint_reason,
)
from allocation.engine.taints import cordon_refuses, untolerated
from allocation.engine.v1.extended import dra_class, is_extended_resource
from allocation.engine.v1_pools import state_profile

if TYPE_CHECKING:
    from allocation.engine.objects import Node, Pod
    from allocation.engine.scheduling.needs import PodNeeds
    from allocation.engine.state import ClusterState

__all__ = ["Picks", "node_refusal", "other_shortfalls", "take", "release", "try_node",
           "dry_run", "claims_fit", "node_detail"]

Picks = list
"""``(inventory, candidate)`` per want, in the order of ``PodNeeds.wants``."""


def node_refusal(state: ClusterState, pod: Pod, node: Node, needs: PodNeeds,
                 check_capacity: bool = True) -> str | None:
    """Why ``node`` cannot take ``pod`` before trying its claims, or None.

    ``check_capacity`` False skips what a bound pod has already passed (cordon, selectors,
    cpu, memory, pod count).
    """
    if check_capacity:
        # kube-scheduler's filters in its order: NodeUnschedulable, TaintToleration,
        # NodeAffinity, NodeResourcesFit (docs/manifests.md, "Node taints")
        if node.unschedulable and cordon_refuses(pod.tolerations):
            return R_UNSCHEDULABLE
        if node.taints:
            taint = untolerated(node.taints, pod.tolerations)
            if taint is not None:
                return taint_reason(taint)
        labels = node.meta.labels
        for key, value in pod.node_selector.items():
            if labels.get(key) != value:
                return R_SELECTOR
        if pod.node_affinity and not node_selector_matches(pod.node_affinity, node):
            return R_SELECTOR
        used = state.usage_of(node.name)
        # NodeResourcesFit names every resource the node lacks, in its order (pods, cpu,
        # memory, the rest): one reason per resource, each counted (reasons.joined)
        short = None
        if used.pods + 1 > node.max_pods:
            short = [R_PODS]
        if pod.cpu_milli and node.cpu_milli is not None \
                and used.cpu_milli + pod.cpu_milli > node.cpu_milli:
            short = [*(short or ()), R_CPU]
        if pod.memory and node.memory is not None and used.memory + pod.memory > node.memory:
            short = [*(short or ()), R_MEMORY]
        if pod.other_requests:  # most pods have none
            for name, _wants, _free in other_shortfalls(state, pod, node, used.other):
                short = [*(short or ()), insufficient(name)]
        if short:
            return short[0] if len(short) == 1 else joined(short)
    for claim in needs.allocated:
        if claim.allocation is None or not claim.allocation.usable_on(node):
            return R_ELSEWHERE
    for _claim, plan in needs.pending:
        suitable = plan.resource_class.suitable_nodes if plan.resource_class else None
        if suitable and not node_selector_matches(suitable, node):
            return R_CLASS
    return None


def other_shortfalls(state: ClusterState, pod: Pod, node: Node,
                     used: Mapping[str, int]) -> Iterator[tuple[str, int, int]]:
    """NodeResourcesFit for what a pod requests besides cpu and memory, in name order: an
    extended resource (``domain/name``) beyond the node's allocatable, none counting as 0,
    unless DRA serves it there (DRAExtendedResource, ``v1.extended.dra_class``); the
    others (ephemeral-storage, hugepages-*) only against an allocatable the node states,
    as cpu and memory (docs/manifests.md, "Pod requests").

    Returns:
        ``(resource, wanted, free)`` for each resource the node lacks.
    """
    classes: list[dict] | None = None
    for name in sorted(pod.other_requests):
        allocatable = node.other_allocatable.get(name)
        extended = is_extended_resource(name)
        if allocatable is None:
            if not extended:
                continue
            allocatable = 0
        wants = pod.other_requests[name]
        if allocatable <= 0 and extended:
            if classes is None:
                classes = _dra_classes(state)
            if classes and dra_class(name, allocatable, classes) is not None:
                continue  # the pod's extended-resource claim asks for it (v1_extended)
        free = allocatable - used.get(name, 0)
        if wants > free:
            yield name, wants, free


def _dra_classes(state: ClusterState) -> list[dict]:
    """The DeviceClasses that may serve extended resources: none with DRAExtendedResource
    off."""
    if not state_profile(state).extended_resource:
        return []
    # the documents as read (v1 already), not ``as_v1`` copies: asked per node tried
    return [c.raw for c in state.of_kind(DeviceClass)]


def take(state: ClusterState, node: Node, wants: list[Want], strategy: str
         ) -> tuple[Picks | None, str | None]:
    """Search ``wants`` on ``node`` and keep the picks taken, or say why none were found."""
    picks, exhausted = search(state.inventory_index, node.name, wants, strategy)
    if picks is None:
        return None, R_BUDGET if exhausted else R_CLAIMS
    return picks, None


def release(wants: list[Want], picks: Picks) -> None:
    """Give back picks that :func:`take` kept taken."""
    for want, (inventory, candidate) in zip(wants, picks, strict=True):
        inventory.release(candidate, want.owner)


def try_node(state: ClusterState, pod: Pod, node: Node, needs: PodNeeds, strategy: str,
             check_capacity: bool = True) -> tuple[Picks | None, str | None]:
    """Picks for the pod's pending claims on ``node`` (kept taken), or the refusal."""
    refusal = node_refusal(state, pod, node, needs, check_capacity)
    if refusal:
        return None, refusal
    wants = needs.wants
    if not wants:
        return [], None
    return take(state, node, wants, strategy)


def dry_run(state: ClusterState, pod: Pod, node: Node, needs: PodNeeds, strategy: str
            ) -> str | None:
    """Why ``pod`` does not fit ``node``, or None when it fits; nothing stays taken."""
    picks, refusal = try_node(state, pod, node, needs, strategy)
    if picks is not None:
        release(needs.wants, picks)
    return refusal


def claims_fit(state: ClusterState, node: Node, wants: list[Want], strategy: str
               ) -> str | None:
    """Why ``wants`` cannot all be met on ``node``, or None; nothing stays taken."""
    if not wants:
        return None
    picks, refusal = take(state, node, wants, strategy)
    if picks is not None:
        release(wants, picks)
    return refusal


def node_detail(state: ClusterState, node: Node, needs: PodNeeds, reason: str | None,
                strategy: str) -> dict:
    """One node's entry of the explain annotation, with its requests when claims failed."""
    entry: dict = {"node": node.name, "reason": reason}
    if reason in CLAIM_REASONS:
        entry["requests"] = explain_node(state.inventory_index, node.name, needs.wants,
                                         strategy)
    return entry
