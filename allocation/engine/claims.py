"""The resource claim controller: claims from templates, releasing, deallocating.

It creates ``<pod>-<podClaimName>`` claims owned by their pod, drops reservations of pods
that finished or are gone, and deallocates structured ``WaitForFirstConsumer`` claims that
no pod reserves any more (``Immediate`` claims stay allocated, as the seeds say).
resource.k8s.io/v1 claims and templates follow upstream's rules instead; it hands them to
``claims_v1.V1ClaimController`` in the same pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from allocation.engine import kinds
from allocation.engine.claims_v1 import V1ClaimController
from allocation.engine.constants import (
    CLAIMS_COMPONENT,
    POD_CLAIM_NAME_ANNOTATION,
)
from allocation.engine.faults import each
from allocation.engine.models import registry
from allocation.engine.objects import Pod, ResourceClaim, ResourceClaimTemplate
from allocation.engine.objects.meta import json_copy
from allocation.engine.quiet import Quiet

if TYPE_CHECKING:
    from allocation.engine.objects import ObjectKey
    from allocation.engine.state import ClusterState

__all__ = ["ClaimController", "deallocate", "claim_from_template"]


def deallocate(state: ClusterState, claim: ResourceClaim, why: str) -> None:
    """Clear a structured allocation and give back what it held."""
    claim = state.writable(claim)  # a fork changes its own copies (ClusterState.fork)
    allocation = claim.allocation
    if allocation is None:
        return
    for inventory, candidate in allocation.picks:
        own = state.inventory_for(inventory)
        if own is not None:
            own.release(candidate, claim.ref)
    claim.allocation = None
    claim.driver_name = None
    finalizers = registry.by_finalizer()
    claim.meta.finalizers = [f for f in claim.meta.finalizers if f not in finalizers]
    state.epoch += 1
    state.events.record(claim, "Normal", "Deallocated", why, component=CLAIMS_COMPONENT)


class ClaimController:
    """Reconciles claims with the pods that use them."""

    name = "claims"

    def __init__(self) -> None:
        self.v1 = V1ClaimController()
        # pods and claims with nothing to do, until what they depend on changes
        self.quiet = Quiet()
        # the claims this pass created, by id (held here, so an id is its claim's)
        self._created: dict[int, ResourceClaim] = {}

    def next_wakeup(self, state: ClusterState) -> None:
        """The claim controller has no timers."""
        return None

    def carry(self, other: ClaimController, state: ClusterState) -> None:
        """Remember what ``other`` (on the state ``state`` was forked from) found quiet, and
        the claims its v1 half knew were made from templates."""
        self.quiet = other.quiet.fork_for(state)
        self.v1.quiet = other.v1.quiet.fork_for(state)
        self.v1.made = other.v1.made.fork_for(state)

    def reconcile(self, state: ClusterState) -> bool:
        self.quiet.observe(state)
        self._created = {}
        changed = self._create_from_templates(state)
        changed |= self._release(state)
        self._created = {}
        changed |= self.v1.reconcile(state)
        return changed

    def warm(self, state: ClusterState) -> None:
        """Bring the v1 half's lazily kept index up to date (``Simulation.warm``)."""
        self.v1.warm(state)

    def pod_bound(self, state: ClusterState, pod: Pod, claims: list[ObjectKey]) -> None:
        """What the next round's visits of ``pod``, bound by the scheduler just now, and of
        its claims would find (a ``BoundListener``): nothing to do. The pod's template
        claims all exist (``_create_for``; ``claims`` holds every claim of the pod, a
        superset of what that visit reads); a claim reserved for this pod alone stands
        (``_release_claim``). Remembered unless touched before the next round
        (``Quiet.remember_after``); a claim shared with other pods is visited as before."""
        quiet, objects = self.quiet, state.objects
        if not pod.terminated and state.has(ResourceClaimTemplate):  # else pods unvisited
            quiet.remember_after(state, pod, claims)
        name, uid, namespace = pod.meta.name, pod.meta.uid, pod.meta.namespace
        deps = [pod.key]
        for key in claims:
            claim = objects[key]
            reserved = claim.reserved_for
            if len(reserved) == 1 and type(claim) is ResourceClaim \
                    and claim.meta.namespace == namespace:
                ref = reserved[0]
                if ref.get("resource") == "pods" and ref.get("name") == name \
                        and ref.get("uid") == uid:
                    quiet.remember_after(state, claim, deps)

    def _create_from_templates(self, state: ClusterState) -> bool:
        if not state.has(ResourceClaimTemplate):
            return False  # no seed template: no pod needs a claim made (a v1 cluster's)
        return each(state, self.name, self.quiet.unknown_of(state, Pod),
                    lambda pod: self._create_for(state, pod))

    def _create_for(self, state: ClusterState, pod: Pod) -> bool:
        """The missing claims of ``pod``'s template entries."""
        if pod.terminated:
            return False
        changed = missing = False
        claims = []  # the keys of the template claims, all found (the claims' own keys)
        namespace = pod.meta.namespace
        for pod_claim in pod.claims:
            if not pod_claim.template_name:
                continue
            name = pod.claim_name(pod_claim)
            claim = state.get("ResourceClaim", namespace, name)
            if claim is not None:
                claims.append(claim.key)
                continue
            template = state.get("ResourceClaimTemplate", namespace, pod_claim.template_name)
            if not isinstance(template, ResourceClaimTemplate):
                # missing: the scheduler reports it on the pod; v1: claims_v1.py
                missing = True
                continue
            claim = claim_from_template(pod, pod_claim.name, template, name=name)
            state.add(claim)
            self._created[id(claim)] = claim
            changed = True
        if not changed and not missing:
            self.quiet.remember(pod, claims)  # every template claim exists
        return changed

    def _release(self, state: ClusterState) -> bool:
        # reservedFor names pods of the claim's own namespace. A pod that failed in this
        # simulation (engine/faults.py) is left as it stands, and so are its reservations.
        # (A reservation's uid must be a live pod's: any live pod's, as upstream's check.)
        if not state.has(ResourceClaim):
            # a v1 cluster: no seed claim to release, and the kind's walk would sift every
            # touched v1 claim (the same kind name) out of ``unknown_of``'s keys each
            # round; the keys touched meanwhile are gathered at the first walk (as
            # claims_v1.py passes over its kind in a seed cluster)
            return False
        claims = self.quiet.unknown_of(state, ResourceClaim)
        if self._created:
            # A claim made from a template this pass has no reservation and no allocation:
            # its visit would change nothing, and what it remembered would be forgotten at
            # the next round, its creation being touched after this round's look
            # (engine/quiet.py). The next round visits it as before.
            created = self._created
            claims = [claim for claim in claims if id(claim) not in created]
        live = _Live(state) if claims else None
        return each(state, self.name, claims,
                    lambda claim: self._release_claim(state, claim, live))

    def _release_claim(self, state: ClusterState, claim: ResourceClaim, live: _Live) -> bool:
        """Drop reservations of pods that are gone or finished; deallocate if unused."""
        changed = False
        kept, pods = live.standing(claim)
        if len(kept) != len(claim.reserved_for):
            gone = [r["name"] for r in claim.reserved_for if r not in kept]
            claim = state.writable(claim)
            claim.reserved_for = kept
            state.epoch += 1
            changed = True
            state.events.record(claim, "Normal", "Released",
                                f"No longer reserved for pod(s) {', '.join(gone)}",
                                component=CLAIMS_COMPONENT)
        # Structured claims carry their model's delete-protection finalizer; an input
        # allocation without it is left as it stands (the input is honoured).
        if (claim.allocation is not None and not claim.reserved_for and not claim.immediate
                and not claim.controller_name
                and any(f in registry.by_finalizer() for f in claim.meta.finalizers)):
            deallocate(state, claim, "No pod uses the claim any more")
            changed = True
        if not changed and pods is not None:
            # each reservation is its named pod's, running: those pods' keys decide
            self.quiet.remember(claim, [pod.key for pod in pods])
        return changed


class _Live:
    """The running pods, by namespace and name, and their uids (made once a round)."""

    def __init__(self, state: ClusterState) -> None:
        self._state = state
        self._uids: set[str] | None = None

    def pod(self, namespace: str | None, name: str | None) -> Pod | None:
        pod = self._state.get("Pod", namespace, name or "")  # per reservation: no ObjectKey made
        return pod if isinstance(pod, Pod) and not pod.terminated else None

    def standing(self, claim: ResourceClaim) -> tuple[list[dict], list[Pod] | None]:
        """The claim's reservations that stand, and the pods they name when every one is
        its named pod's, running, by name and, if given, by uid (else None).

        A pod reservation stands when its named pod runs and its uid, if given, is a
        running pod's: any running pod's, as upstream's check. The named pod's own uid
        answers without :attr:`uids`, which walks every pod: a kept pass
        (docs/console.md, "The kept state") looks at a few claims. Other reservations
        stand and are not a pod's.
        """
        kept: list[dict] = []
        pods: list[Pod] | None = []
        namespace = claim.meta.namespace
        for ref in claim.reserved_for:
            if ref.get("resource") != "pods":
                kept.append(ref)
                pods = None
                continue
            pod = self.pod(namespace, ref.get("name"))
            if pod is None:
                pods = None
                continue
            uid = ref.get("uid")
            if not uid or uid == pod.meta.uid:
                kept.append(ref)
                if pods is not None:
                    pods.append(pod)
                continue
            pods = None
            if uid in self.uids:
                kept.append(ref)
        return kept, pods

    @property
    def uids(self) -> set[str]:
        if self._uids is None:
            self._uids = {p.meta.uid for p in self._state.pods() if not p.terminated}
        return self._uids


def claim_from_template(pod: Pod, pod_claim_name: str, template: ResourceClaimTemplate,
                        *, name: str | None = None) -> ResourceClaim:
    """The claim a pod's template entry gets: ``<pod>-<podClaimName>``, owned by the pod.

    ``name``, when given, is ``pod.claim_name(pod_claim_name)`` found already by the caller.
    """
    meta = template.claim_metadata
    labels, annotations = meta.get("labels"), meta.get("annotations")
    metadata = {"name": name or pod.claim_name(pod_claim_name), "namespace": pod.namespace}
    if labels:
        metadata["labels"] = json_copy(labels)
    # a template's metadata is most often empty: nothing to copy (a claim is made per pod)
    metadata["annotations"] = {**json_copy(annotations), POD_CLAIM_NAME_ANNOTATION:
                               pod_claim_name} if annotations else \
        {POD_CLAIM_NAME_ANNOTATION: pod_claim_name}
    metadata["ownerReferences"] = [pod.owner_reference()]
    return ResourceClaim({
        "apiVersion": kinds.RESOURCE_CLAIM.preferred_version, "kind": "ResourceClaim",
        "metadata": metadata,
        # the template's, shared: a claim's spec is never changed in place (its object
        # reads it; to_manifest copies it), as a v1 template claim's (ResourceClaimV1.made_from)
        "spec": template.claim_spec,
    })
