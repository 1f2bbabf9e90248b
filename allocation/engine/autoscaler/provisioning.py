"""The autoscaler controller: ProvisioningRequests and best-effort scale-up (spec section 5).

Per round it (1) warns about pods with half the seed's consume annotations, (2) evaluates
each ProvisioningRequest of a known class (check-capacity once; atomic scale-up until
provisioned, retried with back-off on the virtual clock until it expires), then (3) grows
the first node group that fits each other unschedulable pod. Consuming pods never trigger
a scale-up of their own.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from allocation.engine.autoscaler.messages import fit_message, plural
from allocation.engine.autoscaler.nodegroups import blueprints, group_size, grow
from allocation.engine.autoscaler.plugin import AutoscalerSimulation
from allocation.engine.autoscaler.scaleup import (
    PodSet,
    add_group_nodes,
    make_pods,
    place_pods,
    plan_atomic,
)
from allocation.engine.constants import AUTOSCALER_COMPONENT
from allocation.engine.events import parse_time
from allocation.engine.faults import each
from allocation.engine.objects import ObjectKey, Pod, ProvisioningRequest
from allocation.engine.objects import provisioning as limits
from allocation.engine.touched_since import TouchedSince

if TYPE_CHECKING:
    from allocation.engine.state import ClusterState

__all__ = ["ProvisioningController", "consumes", "set_condition"]



class _Retry(NamedTuple):
    """An atomic request's failed attempts so far, and when to try again."""

    failures: int
    at: datetime


def consumes(pod: Pod) -> str | None:
    """The ProvisioningRequest a pod consumes (both seed annotations or upstream's one)."""
    notes = pod.meta.annotations
    if notes.get(limits.CONSUME_ANNOTATION):
        return notes[limits.CONSUME_ANNOTATION]
    if notes.get(limits.SEED_CONSUME_ANNOTATION) and notes.get(limits.SEED_CLASS_ANNOTATION):
        return notes[limits.SEED_CONSUME_ANNOTATION]
    return None


def set_condition(req: ProvisioningRequest, type_: str, status: str, reason: str,
                  message: str, now: str) -> bool:
    """Set a condition by type (keeping its transition time when the status stays)."""
    new = {"type": type_, "status": status, "reason": reason, "message": message,
           "lastTransitionTime": now}
    for index, current in enumerate(req.conditions):
        if current.get("type") == type_:
            if all(current.get(k) == new[k] for k in ("status", "reason", "message")):
                return False
            if current.get("status") == status:
                new["lastTransitionTime"] = current.get("lastTransitionTime", now)
            req.conditions[index] = new
            return True
    req.conditions.append(new)
    return True


def _status(req: ProvisioningRequest, type_: str) -> str | None:
    found = next((c for c in req.conditions if c.get("type") == type_), None)
    return found.get("status") if found else None


def _half_pair(notes: dict) -> tuple[str, str] | None:
    """(the annotation present, the one missing) when ``notes`` hold one of the seed's two
    consume annotations without upstream's one, else None."""
    if not notes:  # most pods (asked per pod a round touched)
        return None
    pair = (limits.SEED_CLASS_ANNOTATION, limits.SEED_CONSUME_ANNOTATION)
    present = [a for a in pair if notes.get(a)]
    if len(present) != 1 or notes.get(limits.CONSUME_ANNOTATION):
        return None
    return present[0], next(a for a in pair if a not in present)


class _HalfAnnotated:
    """The keys of a state's pods with half the seed's consume pair (:func:`_half_pair`),
    kept up to date from the keys the state touched (``engine/touched_since.py``): a round
    looks at the pods it changed, not at every pod, and a pod's annotations change only
    through ``ClusterState.writable``, which touches its key."""

    def __init__(self) -> None:
        self._since = TouchedSince()
        self._keys: set[ObjectKey] = set()

    def fork_for(self, fork: ClusterState) -> _HalfAnnotated:
        """These keys, for ``fork`` (just made from this reader's state, sharing every pod),
        read from the fork's start; this reader first reads what its own state touched."""
        twin = _HalfAnnotated()
        parent = self._since.state
        if parent is not None:
            self.pods(parent)
            twin._keys = set(self._keys)
            twin._since = self._since.fork_for(fork)
        return twin

    def pods(self, state: ClusterState) -> list[Pod]:
        """The pods of ``state`` with half the pair, in document order."""
        keys = self._since.keys(state)
        found = self._keys
        if keys is None:  # a state not seen before: every pod
            found.clear()
            found.update(pod.key for pod in state.of_kind(Pod)
                         if _half_pair(pod.meta.annotations) is not None)
        else:
            objects = state.objects
            for key in set(keys):
                obj = objects.get(key)
                if isinstance(obj, Pod) and _half_pair(obj.meta.annotations) is not None:
                    found.add(key)
                else:
                    found.discard(key)
        if not found:
            return []
        objects = state.objects
        return [objects[key] for key in state.in_order(found)]


class ProvisioningController:
    """Reconciles ProvisioningRequests and unschedulable pods with the node groups."""

    name = "autoscaler"

    def __init__(self, strategy: str = "first-fit") -> None:
        self.strategy = strategy
        self.retry_at: dict[ObjectKey, _Retry] = {}
        self.told: dict[tuple, str] = {}  # (object key, topic) -> last message, no repeats
        # the pods with half the seed's pair, found from what the state touched
        self.half = _HalfAnnotated()

    # -- the pass -----------------------------------------------------------------------
    def begin_pass(self) -> None:
        """A new worker pass on the kept state (``services/incremental.py``): what was told
        is told again, as a pass that builds the whole cluster tells it."""
        self.told.clear()

    def carry(self, other: ProvisioningController, state: ClusterState) -> None:
        """Start from the pods ``other`` (on the state ``state`` was forked from) found with
        half the pair, so a scenario's fork (``Simulation.fork``) looks at the annotations
        of the pods it changed, not of every pod. What was told is not carried: a fork
        tells again what a simulation of its documents would tell (the pods with half the
        pair are told about at every round, ``told`` keeping repeats out)."""
        self.half = other.half.fork_for(state)

    def reconcile(self, state: ClusterState) -> bool:
        self._check_annotations(state)
        changed = each(state, self.name, list(state.of_kind(ProvisioningRequest)),
                       lambda req: self._request(state, req))
        changed |= self._best_effort(state)
        return changed

    def next_wakeup(self, state: ClusterState) -> datetime | None:
        """When a waiting atomic request next needs attention (retry or expiry)."""
        now = state.clock.now
        times = []
        for key, (_failures, retry) in self.retry_at.items():
            req = state.objects.get(key)
            if req is None or _status(req, "Failed") == "True":
                continue
            deadline = self._deadline(req)
            times.extend(t for t in (retry, deadline) if t is not None and t > now)
        return min(times, default=None)

    def _tell(self, state: ClusterState, obj, topic: str, type_: str, reason: str,
              message: str) -> None:
        key = (obj.key, topic)
        if self.told.get(key) != message:
            self.told[key] = message
            state.events.record(obj, type_, reason, message, component=AUTOSCALER_COMPONENT)

    def _check_annotations(self, state: ClusterState) -> None:
        def check(pod: Pod) -> None:
            missing = _half_pair(pod.meta.annotations)
            if missing is not None:
                self._tell(state, pod, "annotations", "Warning", "IncompleteConsumeAnnotations",
                           f"pod has {missing[0]} but not {missing[1]}: both are needed to "
                           "consume a ProvisioningRequest, so the pod is treated as an "
                           "ordinary pod")

        each(state, self.name, self.half.pods(state), check)

    # -- one request --------------------------------------------------------------------
    def _deadline(self, req: ProvisioningRequest) -> datetime | None:
        if not req.meta.creation_timestamp:
            return None
        try:
            window = limits.valid_until(req.parameters) or limits.DEFAULT_RETRY_WINDOW
        except ValueError:
            window = limits.DEFAULT_RETRY_WINDOW
        return parse_time(req.meta.creation_timestamp) + window

    def _request(self, state: ClusterState, req: ProvisioningRequest) -> bool:
        kind = req.canonical_class
        if kind not in limits.CLASS_NAMES:
            self._tell(state, req, "class", "Warning", "UnsupportedProvisioningClass",
                       f"provisioning class {req.class_name!r} is not one this planner "
                       f"simulates ({', '.join(limits.CLASS_NAMES)}); the request is ignored")
            return False
        if _status(req, "Failed") == "True" or _status(req, "Provisioned") == "True":
            return False
        if kind == limits.CHECK_CAPACITY and _status(req, "Provisioned") is not None:
            return False  # a one-off check (seed)
        now = state.clock.now
        retry = self.retry_at.get(req.key)
        if retry is not None and now < retry.at and now < (self._deadline(req) or now):
            return False
        req = state.writable(req)
        stamp = state.clock.stamp()
        changed = False
        if not req.meta.creation_timestamp:
            req.meta.creation_timestamp = stamp  # as the API server would on create
            changed = True
        digest = limits.spec_digest(req.raw["spec"])
        if req.statuses.get(limits.DIGEST_KEY) != digest:
            req.statuses[limits.DIGEST_KEY] = digest
            changed = True
        changed |= set_condition(req, "Accepted", "True", "Accepted",
                                 "ProvisioningRequest is accepted.", stamp)
        pod_sets = []
        for index, entry in enumerate(req.pod_sets):
            name = entry["podTemplateRef"]["name"]
            template = state.get("PodTemplate", req.namespace, name)
            if template is None:
                message = (f"podSets[{index}]: PodTemplate {req.namespace}/{name} not found; "
                           "create it (the request is not retried)")
                set_condition(req, "Failed", "True", "FailedToCreatePods", message, stamp)
                self._tell(state, req, "failed", "Warning", "FailedToCreatePods", message)
                return True
            pod_sets.append(PodSet(template, int(entry["count"])))
        if kind == limits.CHECK_CAPACITY:
            return self._check(state, req, pod_sets, stamp) or changed
        return self._atomic(state, req, pod_sets, stamp) or changed

    def _check(self, state: ClusterState, req, pod_sets: list[PodSet], stamp: str) -> bool:
        sim = AutoscalerSimulation(state, self.strategy)
        placement = place_pods(sim, make_pods(req.name, pod_sets))
        message = fit_message(placement.fit, placement.total, placement.blocked,
                              placement.needs, placement.why)
        ok = placement.blocked is None
        set_condition(req, "CapacityAvailable", "True" if ok else "False",
                      "CapacityAvailable" if ok else "CapacityNotAvailable", message, stamp)
        set_condition(req, "Provisioned", "True" if ok else "False",
                      "CapacityIsFound" if ok else "CapacityIsNotFound", message, stamp)
        self._tell(state, req, "result", "Normal" if ok else "Warning",
                   "CapacityIsFound" if ok else "CapacityIsNotFound", message)
        return True

    def _atomic(self, state: ClusterState, req, pod_sets: list[PodSet], stamp: str) -> bool:
        now = state.clock.now
        deadline = self._deadline(req)
        if deadline is not None and now >= deadline:
            message = (f"gave up at {stamp}: no capacity found before "
                       + ("ValidUntilSeconds ran out" if limits.VALID_UNTIL in req.parameters
                          else "7 days passed"))
            previous = next((c for c in req.conditions if c.get("type") == "Provisioned"), None)
            if previous is not None and previous.get("message"):
                message += f"; last attempt: {previous['message']}"
            set_condition(req, "Failed", "True", "Expired", message, stamp)
            self._tell(state, req, "failed", "Warning", "Expired", message)
            self.retry_at.pop(req.key, None)
            return True
        groups = blueprints(state)
        placement, decision = plan_atomic(state, req.name, pod_sets, groups, self.strategy)
        if placement.blocked is None:
            message = fit_message(placement.fit, placement.total) + " on existing capacity"
            set_condition(req, "Provisioned", "True", "CapacityIsFound", message, stamp)
            self.retry_at.pop(req.key, None)
            return True
        if decision.group is not None:
            before = group_size(state, decision.group.name)
            names = grow(state, decision.group, decision.count)
            message = (f"added {plural(decision.count, 'node')} to node group "
                       f"{decision.group.name} ({before} -> {before + decision.count}, maxSize "
                       f"{decision.group.group.max_size}): {', '.join(names)}; all "
                       f"{plural(placement.total, 'pod')} fit")
            set_condition(req, "Provisioned", "True", "CapacityIsProvisioned", message, stamp)
            self._tell(state, req, "result", "Normal", "TriggeredScaleUp", message)
            self.retry_at.pop(req.key, None)
            return True
        failures = self.retry_at.get(req.key, _Retry(0, now)).failures + 1
        retry = now + limits.backoff(failures)
        self.retry_at[req.key] = _Retry(failures, retry)
        message = fit_message(placement.fit, placement.total, placement.blocked,
                              placement.needs, placement.why, decision.notes)
        wait = int(limits.backoff(failures).total_seconds() // 60)
        message += f"; nothing was added; retrying in {wait}m"
        set_condition(req, "Provisioned", "False", "CapacityIsNotFound", message, stamp)
        self._tell(state, req, "result", "Warning", "CapacityIsNotFound", message)
        return True

    # -- other pods ---------------------------------------------------------------------
    def _best_effort(self, state: ClusterState) -> bool:
        groups = [g for g in blueprints(state) if not g.problem]
        if not groups:
            return False
        # what the cluster autoscaler lists as unschedulable: kube-scheduler's reason, not a
        # gated pod's or a SchedulerError (scheduling/gates.py)
        waiting = [p for p in state.pods() if not p.node_name and not p.terminated
                   and _unschedulable(p.condition("PodScheduled")) and consumes(p) is None]
        if not waiting:
            return False
        added: dict[str, int] = {}
        current = [AutoscalerSimulation(state, self.strategy)]  # grows with each scale-up

        def place(pod: Pod) -> None:
            sim = current[0]
            if sim.place(pod).ok:
                return  # capacity already there (or added for an earlier pod)
            notes = []
            for blueprint in groups:
                size = group_size(sim.state, blueprint.name)
                if size >= blueprint.group.max_size:
                    notes.append(f"node group {blueprint.name} is at maxSize "
                                 f"{blueprint.group.max_size}")
                    continue
                trial = sim.fork()
                [name] = add_group_nodes(trial, blueprint, 1)
                status = trial.bind_pod(pod, name)
                if status.ok:
                    current[0] = trial
                    added[blueprint.name] = added.get(blueprint.name, 0) + 1
                    self._tell(state, pod, "scale-up", "Normal", "TriggeredScaleUp",
                               f"pod triggered scale-up of node group {blueprint.name}")
                    return
                notes.append(f"node group {blueprint.name} cannot fit it: {status.message}")
            self._tell(state, pod, "scale-up", "Normal", "NotTriggerScaleUp",
                       "pod didn't trigger scale-up: " + "; ".join(notes))

        each(state, self.name, waiting, place)
        for blueprint in groups:
            count = added.get(blueprint.name)
            if count:
                before = group_size(state, blueprint.name)
                names = grow(state, blueprint, count)
                state.events.record(state.get("NodeGroup", None, blueprint.name), "Normal",
                                    "ScaledUpGroup", f"scale-up for unschedulable pods: "
                                    f"{blueprint.name} {before} -> {before + count} (max: "
                                    f"{blueprint.group.max_size}): {', '.join(names)}",
                                    component=AUTOSCALER_COMPONENT)
        return bool(added)


def _unschedulable(condition: dict | None) -> bool:
    """The cluster autoscaler's ``isUnschedulable``: ``PodScheduled=False`` with reason
    ``Unschedulable``."""
    return condition is not None and condition.get("status") == "False" \
        and condition.get("reason") == "Unschedulable"
