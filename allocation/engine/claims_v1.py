"""The resource claim controller for resource.k8s.io/v1 claims (docs/v1.md, "Simulating
v1"), as upstream's pkg/controller/resourceclaim does it (spec section 4).

Beside the seed one (``claims.py``), it

- creates the claims of pods' v1 ResourceClaimTemplate entries
  (``v1/templates.claim_from_template``, through one ``ClaimPrototype`` per template) and
  records them in ``pod.status.resourceClaimStatuses`` (in ``spec.resourceClaims`` order;
  upstream applies them from a Go map), adopting a claim it made earlier that the status
  lost (found in ``made_claims.MadeIndex``);
- drops ``status.reservedFor`` entries of pods that are gone, replaced (another UID) or done
  (Succeeded, Failed, or deleted before being scheduled: upstream's ``isPodDone``);
- when that drops the last reservation, clears ``status.allocation`` and the
  ``resource.kubernetes.io/delete-protection`` finalizer (a claim allocated but unreserved
  in the input stays allocated: upstream deallocates on the transition only);
- deletes an unreserved claim made for a pod that is done, replaced or gone (the last
  is the garbage collector's part upstream).

Upstream's controller records no Events, and neither does this one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from allocation.engine.constants import V1_CLAIM_FINALIZER
from allocation.engine.faults import each
from allocation.engine.made_claims import MadeIndex
from allocation.engine.objects import (
    ObjectKey,
    Pod,
    ResourceClaimTemplateV1,
    ResourceClaimV1,
)
from allocation.engine.quiet import Quiet
from allocation.engine.v1.templates import ClaimPrototype
from allocation.engine.v1_pools import state_profile

if TYPE_CHECKING:
    from allocation.engine.state import ClusterState

__all__ = ["V1ClaimController", "pod_done", "deallocate_v1"]


def pod_done(pod: Pod) -> bool:
    """Upstream's ``isPodDone``: Succeeded or Failed, or deleted before it was scheduled."""
    return pod.phase in ("Succeeded", "Failed") or (
        pod.meta.deletion_timestamp is not None and not pod.node_name)


def deallocate_v1(state: ClusterState, claim: ResourceClaimV1) -> ResourceClaimV1:
    """Clear the claim's allocation and its delete-protection finalizer.

    Returns:
        The writable claim.
    """
    claim = state.writable(claim)
    claim.allocation = None
    claim.device_statuses = []  # the API server accepts statuses of allocated devices only
    claim.meta.finalizers = [f for f in claim.meta.finalizers if f != V1_CLAIM_FINALIZER]
    state.epoch += 1
    return claim


class V1ClaimController:
    """Template claims, reservations, deallocation and deletion of v1 claims."""

    name = "claims-v1"

    def __init__(self) -> None:
        # pods and claims with nothing to do, until what they depend on changes
        self.quiet = Quiet()
        # the claims made from templates, kept between rounds and passes (_Made reads it)
        self.made = MadeIndex()

    def next_wakeup(self, state: ClusterState) -> None:
        """The claim controller has no timers."""
        return None

    def reconcile(self, state: ClusterState) -> bool:
        self.quiet.observe(state)
        # without a v1 template no pod needs a claim made (a seed cluster's pods); with
        # one the index is brought up to date at a pass's first round (a full pass's walk
        # is then not left to the next kept pass, and it never falls more than a pass
        # behind), later only when a pod needs a claim made (_Made): the round after the
        # scheduler's first touched every claim it allocated, and no pod needs one then
        templates = state.has(ResourceClaimTemplateV1)
        index = self.made if templates else None
        if index is not None and index.behind(state):
            index.claims(state)
        made = _Made(index, state)
        pods = self.quiet.unknown_of(state, Pod) if templates else []
        changed = each(state, self.name, pods, lambda pod: self._create_for(state, pod, made))
        # A claim made just now is not synced in this round: it has no reservations and
        # its owner is a pod this round found not done and then wrote (its status), so
        # _sync_claim would change nothing and its answer would be dropped at the next
        # round's observe, which then syncs the claim (a made claim means a next round).
        fresh = made.created
        if not state.has(ResourceClaimV1):
            # a seed cluster: no claim to sync, and the kind's walk would sift every
            # touched seed claim (the same kind name) out of ``unknown_of``'s keys each
            # round; the keys touched meanwhile are gathered at the first walk
            return changed
        changed |= each(state, self.name, [c for c in self.quiet.unknown_of(state, ResourceClaimV1)
                                           if id(c) not in fresh],
                        lambda claim: self._sync_claim(state, claim))
        return changed

    def warm(self, state: ClusterState) -> None:
        """Bring the made-claims index up to date with ``state`` now (``Simulation.warm``):
        a round looks at it only when a pod needs a claim made, so after a pass that
        allocated thousands of claims the next pass's first round would read every key
        they touched, on the path of the write that woke it."""
        if state.has(ResourceClaimTemplateV1):
            self.made.claims(state)

    # -- pods: claims from templates --------------------------------------------------
    def _create_for(self, state: ClusterState, pod: Pod, made: _Made) -> bool:
        if pod_done(pod):
            self.quiet.remember(pod, ())
            return False
        changed = False
        namespace = pod.meta.namespace  # read per entry and lookup: once, not per use
        objects = state.objects  # by plain tuples, as ClusterState.get: per pod and round
        # what the answer read: the claims the entries resolve to, and the templates of
        # the entries that do not resolve to a claim made for the pod (the key of an
        # object found is its own, equal to the one looked up: none made then)
        deps: list[ObjectKey] = []
        for entry in pod.claims:
            template_name = entry.template_name
            if not template_name:
                continue
            # the recorded claim first: whatever the template, an entry recorded with no
            # claim, or with a claim made for the pod, needs nothing (every pod once its
            # claims are made: the template is not looked up then)
            recorded = pod.claim_status(entry.name)
            if recorded is not None:
                current = recorded.get("resourceClaimName")
                if current is None:
                    continue  # no claim needed
                claim = objects.get(("ResourceClaim", namespace, current)) if current else None
                deps.append(claim.key if claim is not None else
                            ObjectKey("ResourceClaim", namespace, current))
                # the pod's own claim: its controller owner is the pod, by uid alone, as
                # upstream's IsForPod (a stored claim may carry another owner name)
                if isinstance(claim, ResourceClaimV1) and claim.owner_pod is not None \
                        and claim.owner_pod[1] == pod.meta.uid:
                    # made already; reserved for this pod alone (running: checked above),
                    # as the scheduler leaves it, its own visit would read this pod alone
                    # (``_still_reserved``): answered here, it is not visited after the pods
                    reserved = claim.reserved_for
                    if len(reserved) == 1 and _pod_reference(ref := reserved[0]) \
                            and ref.get("name") == pod.meta.name \
                            and ref.get("uid") == pod.meta.uid \
                            and not (state.failures and claim.key in state.failures):
                        self.quiet.remember(claim, [pod.key])
                    continue
            template = objects.get(("ResourceClaimTemplate", namespace, template_name))
            deps.append(template.key if template is not None else
                        ObjectKey("ResourceClaimTemplate", namespace, template_name))
            if not isinstance(template, ResourceClaimTemplateV1):
                continue  # a seed template (claims.py) or missing: the scheduler says so
            name = _claim_for(state, pod, entry.name, template, made)
            if recorded is not None and recorded.get("resourceClaimName") == name:
                continue  # recorded already: a change every round would never settle
            _record(state, pod, entry.name, name)
            changed = True
        if not changed:
            self.quiet.remember(pod, deps)
        return changed

    # -- claims: reservations, deallocation, deletion ---------------------------------
    def _sync_claim(self, state: ClusterState, claim: ResourceClaimV1) -> bool:
        objects = state.objects
        if self._reserved_alone(claim, objects):
            return False
        namespace, reserved = claim.meta.namespace, claim.reserved_for
        read: list[ObjectKey] = []  # the keys of the pods the answer read
        changed = False
        valid = [r for r in reserved if _still_reserved(r, namespace, objects, read)]
        if len(valid) < len(reserved):
            claim = state.writable(claim)
            claim.reserved_for = valid
            if not valid:
                claim = deallocate_v1(state, claim)
            changed = True
        if not claim.reserved_for:
            owner = claim.owner_pod
            if owner is not None:
                pod = _pod_named(objects, namespace, owner[0], read)
                if pod is None or pod.meta.uid != owner[1] or pod_done(pod):
                    if claim.allocation is not None:
                        deallocate_v1(state, claim)
                    state.remove(claim)
                    changed = True
        if not changed:  # the answer read the claim and the pods it names
            self.quiet.remember(claim, read)
        return changed

    def _reserved_alone(self, claim: ResourceClaimV1, objects: dict) -> bool:
        """Whether ``claim`` has one reservation, which stands (as the scheduler leaves it):
        nothing to do, and only that pod read (remembered here, not the owner)."""
        reserved = claim.reserved_for
        if len(reserved) != 1:
            return False
        read: list[ObjectKey] = []
        if not _still_reserved(reserved[0], claim.meta.namespace, objects, read):
            return False
        self.quiet.remember(claim, read)
        return True


def _still_reserved(ref: dict, namespace: str | None, objects: dict,
                    read: list[ObjectKey]) -> bool:
    """Whether a ``reservedFor`` entry of a claim in ``namespace`` stays: other consumers
    do, pods while they run (the key of a pod looked up is added to ``read``)."""
    if not _pod_reference(ref):
        return True
    return _stands(ref, _pod_named(objects, namespace, ref.get("name"), read))


def _pod_reference(ref: dict) -> bool:
    """Whether a ``reservedFor`` entry names a pod (another consumer's stays)."""
    return not ref.get("apiGroup") and ref.get("resource") == "pods"


def _stands(ref: dict, pod: Pod | None) -> bool:
    """Whether a pod's ``reservedFor`` entry stays, ``pod`` being its named pod: its uid's,
    running."""
    return pod is not None and pod.meta.uid == ref.get("uid") and not pod_done(pod)


def _pod_named(objects: dict, namespace: str | None, name: str | None,
               read: list[ObjectKey]) -> Pod | None:
    """The pod ``namespace/name`` of ``objects``, if any, its key (the found object's own:
    no ObjectKey made then) added to ``read``; by a plain tuple, as ClusterState.get."""
    lookup = ("Pod", namespace, name or "")
    pod = objects.get(lookup)
    read.append(pod.key if pod is not None else ObjectKey(*lookup))
    return pod if isinstance(pod, Pod) else None


class _Made:
    """One round's claims made from templates, by (namespace, pod uid, pod claim name): the
    controller's :class:`MadeIndex` as the round began (a claim made in the round is not
    found, as a walk of every claim then did not find it), and the prototypes.

    The index is asked at the first :meth:`get`: a round makes claims only after a
    ``get`` and writes nothing else of a claim before its pod loop ends, so its claims are
    then still those the round began with."""

    def __init__(self, index: MadeIndex | None, state: ClusterState) -> None:
        # None: no v1 template (nothing is ever made, nothing found)
        self._index, self._state = index, state
        self._made: dict[tuple, ResourceClaimV1] | None = None if index is not None else {}
        # ids of the claims made this round (kept in the state, so the ids stay theirs)
        self.created: set[int] = set()
        # whether the pod's owner reference blocks its deletion (1.34 only)
        self.block_owner_deletion = state_profile(state).block_owner_deletion
        # per template object (kept alive here, so an id found is its own): its prototype
        self._prototypes: dict[int, tuple[ResourceClaimTemplateV1, ClaimPrototype]] = {}

    def prototype(self, template: ResourceClaimTemplateV1) -> ClaimPrototype:
        """The prototype of ``template``'s claims: made once a round per template object
        (a changed template is another object, with its own)."""
        found = self._prototypes.get(id(template))
        if found is None or found[0] is not template:
            found = self._prototypes[id(template)] = (template,
                                                      ClaimPrototype(template.as_v1()))
        return found[1]

    def get(self, namespace: str | None, uid: str | None, name: str) -> ResourceClaimV1 | None:
        """The claim made earlier for the pod's entry ``name``, if any."""
        made = self._made
        if made is None:  # the round's first pod that needs a claim made
            made = self._made = self._index.claims(self._state)
        return made.get((namespace, uid, name))


def _claim_for(state: ClusterState, pod: Pod, entry_name: str,
               template: ResourceClaimTemplateV1, made: _Made) -> str:
    """The name of the claim made for the pod's entry ``entry_name`` from ``template``: one
    made earlier (adopted), else one made now and added to ``state``."""
    meta, objects = pod.meta, state.objects
    namespace = meta.namespace
    claim = made.get(namespace, meta.uid, entry_name)
    if claim is None:
        raw, claim_meta = made.prototype(template).made(
            meta.name, namespace or "default", meta.uid, entry_name,
            lambda n: ("ResourceClaim", namespace, n) in objects, made.block_owner_deletion)
        claim = ResourceClaimV1.made_from(raw, template, claim_meta, (meta.name, meta.uid))
        state.add(claim)
        made.created.add(id(claim))
    return claim.meta.name


def _record(state: ClusterState, pod: Pod, pod_claim_name: str, claim_name: str) -> None:
    """Set the pod's ``status.resourceClaimStatuses`` entry for ``pod_claim_name``."""
    pod = state.writable(pod)
    entry = {"name": pod_claim_name, "resourceClaimName": claim_name}
    for index, status in enumerate(pod.resource_claim_statuses):
        if status.get("name") == pod_claim_name:
            pod.resource_claim_statuses[index] = entry
            return
    pod.resource_claim_statuses.append(entry)
    if len(pod.resource_claim_statuses) == 1:
        return  # nothing to order (a pod with one claim: the usual case)
    order = [c.name for c in pod.claims]
    pod.resource_claim_statuses.sort(
        key=lambda s: order.index(s["name"]) if s.get("name") in order else len(order))
