"""The seeds' ``ClusterAutoScalerPlugin`` as an engine API: what-if scheduling on a snapshot.

:class:`AutoscalerSimulation` starts over a fork of a cluster state (``StartSimulation``)
and offers ``SimulateAddNode`` (:meth:`~AutoscalerSimulation.add_node`),
``SimulateRemoveNode`` (:meth:`~AutoscalerSimulation.remove_node`), ``SimulateBindPod``
(:meth:`~AutoscalerSimulation.bind_pod`), ``SimulateEvictPod``
(:meth:`~AutoscalerSimulation.evict_pod`) and the Filter question "does this pod fit this
node, and if not why" (:meth:`~AutoscalerSimulation.fits`). Nothing is ever written back
to the state it started from. Decisions use the scheduler's own checks, so a pod that fits
here is a pod the scheduler would place; pods with resource.k8s.io/v1 claims are simulated
with the v1 allocator on the snapshot (:mod:`.v1pods`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from allocation.engine import kinds
from allocation.engine.allocator import explain_node
from allocation.engine.autoscaler.v1pods import V1Pods
from allocation.engine.claims import claim_from_template, deallocate
from allocation.engine.models import Strategy
from allocation.engine.objects import Node, Pod, PodTemplate, ResourceClaimTemplate
from allocation.engine.scheduling import binding, fit
from allocation.engine.scheduling.cache import PlacementCache
from allocation.engine.scheduling.needs import Plans, PodNeeds, no_negotiation, pod_needs
from allocation.engine.scheduling.reasons import (
    CLAIM_REASONS,
    FITS_NOW,
    is_node_reason,
    summary,
)
from allocation.engine.state import ClusterState, NodeInUse

__all__ = ["Status", "AutoscalerSimulation", "pod_from_template"]


@dataclass(frozen=True, slots=True)
class Status:
    """The outcome of one simulation call: ``ok`` and a message (the reason when not ok)."""

    ok: bool
    message: str = ""

    def __bool__(self) -> bool:
        return self.ok


def pod_from_template(template: PodTemplate, name: str) -> Pod:
    """A pending pod ``name`` made from a PodTemplate, as a workload controller would."""
    body = template.template
    meta = copy.deepcopy(body.get("metadata") or {})
    meta.update({"name": name, "namespace": template.namespace})
    meta.pop("uid", None)
    spec = copy.deepcopy(body.get("spec") or {})
    spec.pop("nodeName", None)
    return Pod({"apiVersion": kinds.POD.preferred_version, "kind": "Pod", "metadata": meta,
                "spec": spec})


def _why_claims(state: ClusterState, node: str, wants, strategy: str) -> str:
    """The first request that has no candidate left on ``node``, in a few words."""
    for entry in explain_node(state.inventory_index, node, wants, strategy):
        if entry.get("problem"):
            return f"{entry['claim']} {entry['request']}: {entry['problem']}"
        if not entry.get("matching"):
            counts: dict[str, int] = {}
            for refusal in entry.get("refused") or ():  # "allocated to claim x" -> "allocated"
                reason = refusal["reason"].split(" to claim ")[0]
                counts[reason] = counts.get(reason, 0) + len(refusal["candidates"])
            refused = "; ".join(f"{n} {r}" for r, n in counts.items())
            return (f"{entry['claim']} {entry['request']}: no free matching candidate"
                    + (f" ({refused})" if refused else ""))
    return "the requests cannot all be met together"


class AutoscalerSimulation:
    """One autoscaler simulation over a copy-on-write snapshot of a cluster state."""

    def __init__(self, state: ClusterState, strategy: str = Strategy.FIRST_FIT) -> None:
        self.state = state.fork()
        self.strategy = strategy
        self._plans = Plans()  # the snapshot's classes and parameters never change
        self._cache: PlacementCache[str] = PlacementCache()
        self._v1 = V1Pods()  # its own v1 allocator and book, over this snapshot

    @classmethod
    def start(cls, state: ClusterState, strategy: str = Strategy.FIRST_FIT) -> AutoscalerSimulation:
        """``StartSimulation``: a simulation over a snapshot of ``state``."""
        return cls(state, strategy)

    def fork(self) -> AutoscalerSimulation:
        """A simulation that starts where this one is and never changes it."""
        return AutoscalerSimulation(self.state, self.strategy)

    # -- nodes --------------------------------------------------------------------------
    def add_node(self, node: Node, slices=(), capacities=()) -> Status:
        """``SimulateAddNode``: a fictional node with the slices and capacities it brings."""
        try:
            self.state.add_node(node, slices, capacities)
        except ValueError as exc:
            return Status(False, str(exc))
        return Status(True, f"added node {node.name}")

    def remove_node(self, name: str) -> Status:
        """``SimulateRemoveNode``: refused while pods or allocated claims use the node."""
        try:
            self.state.remove_node(name)
        except (NodeInUse, ValueError) as exc:
            return Status(False, str(exc))
        return Status(True, f"removed node {name}")

    # -- pods ---------------------------------------------------------------------------
    def add_pod(self, pod: Pod) -> Status:
        """Add a pending pod, with the claims its templates give it (as the claim controller
        would); a missing template is reported when the pod is placed."""
        state = self.state
        if state.get("Pod", pod.namespace, pod.name) is not None:
            return Status(False, f"pod {pod.ref} exists already")
        V1Pods.add_pod(state, pod)  # with the claims of its v1 templates
        for pod_claim in pod.claims:
            if not pod_claim.template_name:
                continue
            template = state.get("ResourceClaimTemplate", pod.namespace, pod_claim.template_name)
            name = pod.claim_name(pod_claim)
            if isinstance(template, ResourceClaimTemplate) \
                    and state.get("ResourceClaim", pod.namespace, name) is None:
                state.add(claim_from_template(pod, pod_claim.name, template))
        return Status(True, f"added pod {pod.ref}")

    def _pod(self, pod: Pod | str, namespace: str = "default") -> Pod | None:
        if isinstance(pod, str):
            return self.state.get("Pod", namespace, pod)
        return self.state.get("Pod", pod.namespace, pod.name)

    def _needs(self, pod: Pod) -> PodNeeds:
        # The simulation runs no drivers: claims of a control-plane controller stay pending.
        return pod_needs(self.state, pod, self._plans, no_negotiation)

    def _try(self, pod: Pod, node: Node, keep: bool, needs: PodNeeds | None = None
             ) -> tuple[PodNeeds, fit.Picks | None, str | None]:
        """``(needs, picks, reason)``; picks stay taken only when ``keep``."""
        needs = needs or self._needs(pod)
        if needs.error is not None:
            return needs, None, needs.error
        picks, refusal = fit.try_node(self.state, pod, node, needs, self.strategy)
        if picks is None:
            if refusal in CLAIM_REASONS:
                why = _why_claims(self.state, node.name, needs.wants, self.strategy)
                refusal = f"{refusal}: {why}"
            return needs, None, refusal
        if not keep:
            fit.release(needs.wants, picks)
        return needs, picks, None

    def fits(self, pod: Pod | str, node_name: str) -> Status:
        """Filter: whether ``pod`` fits ``node_name`` now, and why not (nothing is taken)."""
        found, node = self._pod(pod), self.state.nodes.get(node_name)
        if found is None or node is None:
            return Status(False, f"{'pod' if found is None else 'node'} not found")
        if self._v1.claims(self.state, found) is not None:
            status = self.fork().bind_pod(found, node_name)  # nothing is taken here
            return Status(status.ok, f"fits node {node_name}" if status.ok else status.message)
        _needs, picks, reason = self._try(found, node, keep=False)
        return Status(picks is not None, reason or f"fits node {node_name}")

    def bind_pod(self, pod: Pod | str, node_name: str) -> Status:
        """``SimulateBindPod``: bind the pod there, allocating claims when first used."""
        found, node = self._pod(pod), self.state.nodes.get(node_name)
        if found is None or node is None:
            return Status(False, f"{'pod' if found is None else 'node'} not found")
        if found.node_name:
            return Status(False, f"pod {found.ref} is bound to {found.node_name} already")
        claims = self._v1.claims(self.state, found)
        if claims is not None:
            refusal = self._v1.bind(self.state, found, node, claims)
            return Status(refusal is None, refusal or node_name)
        needs, picks, reason = self._try(found, node, keep=True)
        if picks is None:
            return Status(False, reason or "does not fit")
        binding.commit(self.state, found, node, needs, picks)
        return Status(True, node_name)

    def place(self, pod: Pod | str) -> Status:
        """Bind the pod to the first node, in name order, that fits it (the scheduler's
        choice); the message is the node, or why no node fits."""
        found = self._pod(pod)
        if found is None:
            return Status(False, "pod not found")
        state = self.state
        claims = self._v1.claims(state, found)
        if claims is not None:
            placed, why = self._v1.place(state, found, claims)
            return Status(placed is not None, placed or why)
        needs = self._needs(found)
        if needs.error is not None:
            return Status(False, needs.error)
        key, epoch, order = needs.signature, state.epoch, state.node_order
        failure = self._cache.failure(key, epoch)  # twins fail for the same reason
        if failure is not None:
            return Status(False, failure)
        for index in range(self._cache.start(key, epoch), len(order)):
            node = state.nodes[order[index]]
            picks, _refusal = fit.try_node(state, found, node, needs, self.strategy)
            if picks is not None:
                self._cache.placed(key, epoch, index)
                binding.commit(state, found, node, needs, picks)
                return Status(True, node.name)
        failure = self._no_node(found, needs)
        self._cache.failed(key, epoch, len(order), failure)
        return Status(False, failure)

    def _no_node(self, pod: Pod, needs: PodNeeds) -> str:
        counts: dict[str, int] = {}
        first_claims = None
        for name in self.state.node_order:
            _needs, picks, reason = self._try(pod, self.state.nodes[name], False, needs)
            reason = FITS_NOW if picks is not None else reason
            # a claim reason may carry its detail after a colon; a node's own (a taint's
            # "{key: value}") is whole
            head = reason if is_node_reason(reason) else reason.split(":", 1)[0]
            counts[head] = counts.get(head, 0) + 1
            if first_claims is None and head in CLAIM_REASONS:
                first_claims = f"{name}: {reason.split(': ', 1)[-1]}"
        message = summary(counts, len(self.state.node_order), end="")
        return message + (f" (first: {first_claims})" if first_claims else "")

    def evict_pod(self, pod: Pod | str, namespace: str = "default") -> Status:
        """``SimulateEvictPod``: unbind the pod; claims no other pod uses are deallocated."""
        found = self._pod(pod, namespace)
        if found is None:
            return Status(False, "pod not found")
        if not found.node_name:
            return Status(False, f"pod {found.ref} is not bound to a node")
        state = self.state
        found = state.writable(found)
        node = found.node_name
        state.charge(found, node, -1)
        found.node_name = None
        released = []
        claims = self._v1.claims(state, found)
        if claims is not None:
            released = V1Pods.evict(state, found, claims)
        for pod_claim in found.claims if claims is None else ():
            name = found.claim_name(pod_claim)
            claim = state.get("ResourceClaim", found.namespace, name)
            if claim is None or found.name not in claim.reserved_pods():
                continue
            claim = state.writable(claim)
            claim.reserved_for = [r for r in claim.reserved_for if r.get("name") != found.name]
            if not claim.reserved_for and claim.allocation is not None \
                    and not claim.controller_name:
                deallocate(state, claim, f"pod {found.ref} evicted in simulation")
                released.append(claim.ref)
        state.epoch += 1
        return Status(True, f"evicted {found.ref} from {node}"
                      + (f"; deallocated {', '.join(released)}" if released else ""))
