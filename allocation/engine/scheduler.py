"""The scheduler: place pending pods, allocating their claims on the chosen node.

Pods are taken in document order; nodes in name order (spec section 5). Pods with
resource.k8s.io/v1 claims are placed by ``scheduling/v1.py``. Pods that ask for
the same things share a placement cache entry (``scheduling/cache.py``), so large
homogeneous clusters stay fast. Pods whose claims a control-plane controller allocates are
handed to the :class:`Negotiator` the scheduler was built with (KEP-3063,
``docs/controlplane.md``); without one such claims stay pending.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from allocation.engine.faults import each
from allocation.engine.labels import named_nodes
from allocation.engine.models import Strategy
from allocation.engine.objects import Pod
from allocation.engine.quiet import Quiet
from allocation.engine.resolve import ClaimPlan
from allocation.engine.scheduling import (
    binding,
    diagnosis,
    diagnosis_devices,
    fit,
    gates,
    renaming,
)
from allocation.engine.scheduling.binding import context_key
from allocation.engine.scheduling.cache import PlacementCache
from allocation.engine.scheduling.needs import Plans, PodNeeds, no_negotiation, pod_needs
from allocation.engine.scheduling.reasons import FITS_NOW, MAX_DETAIL_NODES, detail_of, summary
from allocation.engine.scheduling.v1 import V1Scheduling

if TYPE_CHECKING:
    from datetime import datetime

    from allocation.engine.objects import Node, ObjectKey, ResourceClaim
    from allocation.engine.state import ClusterState

__all__ = ["Scheduler", "Negotiator", "BoundListener"]


class Negotiator(Protocol):
    """The scheduler's half of a negotiation with control-plane drivers (KEP-3063)."""

    def begin(self, state: ClusterState) -> None:
        """Called at the start of each scheduler pass."""

    def blocker(self, claim: ResourceClaim, plan: ClaimPlan) -> str | None:
        """Why a controller-managed claim cannot be negotiated, or None."""

    def involved(self, state: ClusterState, pod: Pod) -> bool:
        """Whether a negotiation for ``pod`` is under way."""

    def schedule(self, state: ClusterState, pod: Pod, needs: PodNeeds) -> bool:
        """One scheduling attempt of a pending pod; whether anything changed."""

    def bound(self, state: ClusterState, pod: Pod, node: Node, needs: PodNeeds) -> bool:
        """A bound pod with controller-managed claims pending; whether anything changed."""


class BoundListener(Protocol):
    """Told of a pod the scheduler bound just now (``Scheduler.bound_listeners``): the
    state, the state's pod, and the keys of its claims, all allocated and reserved for it
    (``pod_needs`` found every one: a missing claim refuses the pod)."""

    def __call__(self, state: ClusterState, pod: Pod, claims: list[ObjectKey]) -> None: ...


class Scheduler:
    """Schedules pods; ``reconcile`` runs one pass and says whether anything changed."""

    name = "scheduler"

    def __init__(self, strategy: str = Strategy.FIRST_FIT,
                 negotiation: Negotiator | None = None) -> None:
        self.strategy = strategy
        self.negotiation = negotiation
        # a failure is remembered as (message, annotation text): pods of one signature get
        # the same body, so it is encoded once, not once per pending pod
        self.cache: PlacementCache[tuple[str, str]] = PlacementCache()
        self.plans = Plans()
        self.quiet = Quiet()
        self.v1 = V1Scheduling(self.quiet)
        self._order: list[str] | None = None  # state.node_order at the last look
        self._astray: set[ObjectKey] = set()  # pods visited bound to a node that does not exist
        # told of each pod this scheduler binds, with its claims' keys: the other
        # controllers' quiet memos (Simulation.on connects them; see _remember_bound)
        self.bound_listeners: list[BoundListener] = []

    def needs(self, state: ClusterState, pod: Pod) -> PodNeeds:
        """What ``pod`` needs now (see ``scheduling/needs.py``)."""
        blocker = self.negotiation.blocker if self.negotiation else no_negotiation
        return pod_needs(state, pod, self.plans, blocker)

    def next_wakeup(self, state: ClusterState) -> datetime | None:
        """The v1 waits for binding conditions time out (``scheduling/v1_prebind.py``)."""
        return self.v1.next_wakeup(state)

    # -- the pass -----------------------------------------------------------------------
    def carry(self, other: Scheduler, state: ClusterState) -> None:
        """Remember what ``other`` (on the state ``state`` was forked from) found quiet, and
        the node order it last looked at: a fork shares its parent's ``node_order`` until
        its nodes change, so its first pass visits what it touched, not every pod. The v1
        allocator's book is copied (``AllocatorSource.fork_for``)."""
        self.quiet = self.v1.quiet = other.quiet.fork_for(state)
        self.v1.source = other.v1.source.fork_for(state)  # the v1 book copied, not rebuilt
        self._order = other._order
        self._astray = set(other._astray)

    def begin_settle(self) -> None:
        """A settle begins (``Simulation.settle``): what the v1 half keeps for its rounds
        is forgotten."""
        self.v1.begin_settle()

    def reconcile(self, state: ClusterState) -> bool:
        self.plans.clear()
        self.quiet.observe(state)
        self.v1.begin()
        if self.negotiation:
            self.negotiation.begin(state)
        # the pods to visit, each judged as its turn comes (an earlier pod's turn may change
        # it): a finished pod, or one bound with nothing to do (engine/quiet.py), is passed
        # over before ``each``, as most of a settled cluster is
        known, nodes = self.quiet.known, state.nodes
        todo = (pod for pod in self._candidates(state)
                if not (known(pod) and pod.node_name and pod.node_name in nodes)
                and not pod.terminated)
        return each(state, self.name, todo, lambda pod: self._pod(state, pod))

    def _candidates(self, state: ClusterState) -> list[Pod]:
        """Every pod, or, while the nodes stand as at the last look, only the pods not known
        to need nothing (``Quiet.unknown_of``) and those visited bound to a missing node
        (a known pod is passed over only while its node exists): a kept pass
        (docs/console.md, "The kept state") visits what it touched, not every pod. A change
        of nodes (a new ``node_order``) takes every pod once."""
        order, self._order = self._order, state.node_order
        if order is not state.node_order:
            self._astray.clear()
            self.quiet.unknown_of(state, Pod)  # the memo's walk, in the pass that walks anyway
            return list(state.pods())
        pods = self.quiet.unknown_of(state, Pod)
        if not self._astray:
            return pods
        keys = {pod.key for pod in pods}
        for key in list(self._astray):
            pod = state.objects.get(key)
            if isinstance(pod, Pod) and pod.node_name and pod.node_name not in state.nodes:
                keys.add(key)
            else:
                self._astray.discard(key)  # it comes back when visited astray again
        return [state.objects[key] for key in state.in_order(keys)]

    def _pod(self, state: ClusterState, pod: Pod) -> bool:
        if not pod.node_name and gates.left_alone(pod):
            if gates.mark_gated(state, pod):
                return True
            self.quiet.remember(pod, ())  # nothing to do until the pod changes
            return False
        if pod.node_name and pod.node_name not in state.nodes:
            self._astray.add(pod.key)
        claims = self.v1.claims(state, pod)
        if claims is not None:  # resource.k8s.io/v1 claims (scheduling/v1.py)
            return self.v1.pod(state, pod, claims)
        if pod.node_name:
            return self._bound_pod(state, pod)
        return self._schedule(state, pod)

    def _involved(self, state: ClusterState, pod: Pod) -> bool:
        return self.negotiation is not None and self.negotiation.involved(state, pod)

    def _bound_pod(self, state: ClusterState, pod: Pod) -> bool:
        """A pod bound already (seed 004): its claims are allocated for its node."""
        needs = self.needs(state, pod)
        node = state.nodes.get(pod.node_name)
        reserved_all = all(pod.name in c.reserved_pods() for c in needs.allocated)
        if needs.controlled and needs.error is None and node is not None:
            return self.negotiation.bound(state, pod, node, needs)
        if (needs.error is None and not needs.pending and reserved_all
                and not self._involved(state, pod)):
            self.quiet.remember(pod, [*(c.key for c in needs.allocated),
                                      context_key(pod)])
            return False
        if needs.error is not None or node is None:
            return binding.mark_unschedulable(state, pod, needs.error or "node not found", {})
        picks, refusal = fit.try_node(state, pod, node, needs, self.strategy,
                                      check_capacity=False)
        if picks is None:
            detail = {"nodes": [fit.node_detail(state, node, needs, refusal, self.strategy)]}
            return binding.mark_unschedulable(
                state, pod, f"pod is bound to {node.name}, where its claims cannot be "
                f"allocated: {refusal}", detail)
        binding.commit(state, pod, node, needs, picks)
        return True

    def _schedule(self, state: ClusterState, pod: Pod) -> bool:
        needs = self.needs(state, pod)
        total = len(state.node_order)
        if needs.error is not None:
            return binding.mark_unschedulable(
                state, pod, f"0/{total} nodes are available: {needs.error}.", {})
        if needs.controlled or self._involved(state, pod):
            return self.negotiation.schedule(state, pod, needs)
        key, epoch = needs.signature, state.epoch
        # a twin's failure, its text naming this pod's own claims (``renaming``)
        failure = self.cache.failure(key, epoch)
        text = (renaming.renamed(failure[1], needs.pending_refs) if failure is not None
                else None)
        if text is not None:
            return binding.mark_unschedulable(state, pod, failure[0], {}, explain=text)
        nodes = state.nodes
        for index in self._scan(state, pod, self.cache.start(key, epoch), total):
            node = nodes[state.node_order[index]]
            picks, _refusal = fit.try_node(state, pod, node, needs, self.strategy)
            if picks is not None:
                self.cache.placed(key, epoch, index)
                binding.commit(state, pod, node, needs, picks)
                self._remember_bound(state, pod, needs)
                return True
        message, detail = self._explain(state, pod, needs)
        rendered = renaming.render(message, detail, needs.pending_refs)
        self.cache.failed(key, epoch, total, (message, rendered))
        return binding.mark_unschedulable(state, pod, message, {}, explain=rendered.text)

    def _remember_bound(self, state: ClusterState, pod: Pod, needs: PodNeeds) -> None:
        """What the next visit of ``pod``, bound just now, would find (``_bound_pod``): its
        claims allocated and reserved for it, no scheduling context, nothing to do. It is
        known from the next pass unless the pod, a claim or the context changes meanwhile
        (``Quiet.remember_after``), so large clusters are not visited twice. A claim
        marked for deallocation is left to that visit, which refuses it (``pod_needs``).

        The ``bound_listeners`` are told the same, so the claim controller remembers what
        its next visit of the pod and its claims would find, rather than visit them all
        once more after a large cluster's first pass."""
        deps = [claim.key for claim in needs.allocated]
        for claim, _plan in needs.pending:
            if claim.deallocation_requested:
                return
            deps.append(claim.key)
        claims = list(deps)
        deps.append(context_key(pod))
        pod = state.objects[pod.key]
        self.quiet.remember_after(state, pod, deps)
        for listen in self.bound_listeners:
            listen(state, pod, claims)

    @staticmethod
    def _scan(state: ClusterState, pod: Pod, start: int, total: int) -> Iterable[int]:
        """The positions in ``state.node_order`` from ``start`` a scan for a node that
        takes ``pod`` visits: each, or only those of the nodes its required node affinity
        names (``labels.named_nodes``: every other node is refused for it, with nothing
        taken, so the first that takes it is the same; a pinned pod is not checked against
        every node of a large cluster). The explanation of a pod no node takes still looks
        at every node."""
        names = named_nodes(pod.node_affinity) if pod.node_affinity else None
        if names is None:
            return range(start, total)
        order, found = state.node_order, []
        for name in names:
            try:
                found.append(order.index(name))  # one pass in C over the names
            except ValueError:
                continue  # no such node
        return sorted(i for i in found if i >= start)

    def _explain(self, state: ClusterState, pod: Pod, needs: PodNeeds) -> tuple[str, dict]:
        counts: Counter[str] = Counter()
        reasons: dict[str, str] = {}
        details = []
        for name in state.node_order:
            node = state.nodes[name]
            # A node fitting after a failed scan cannot happen; the dry run keeps state clean.
            reason = reasons[name] = fit.dry_run(state, pod, node, needs, self.strategy) \
                or FITS_NOW
            counts[reason] += 1
            if len(details) < MAX_DETAIL_NODES:
                details.append(fit.node_detail(state, node, needs, reason, self.strategy))
        total = len(state.node_order)
        # what each node lacks, the nearest nodes, suggestions (once per pod signature)
        body = diagnosis.annotate(detail_of(details, total), state, pod, reasons,
                                  diagnosis_devices.SeedDevices(state, needs, self.strategy))
        return summary(counts, total), body
