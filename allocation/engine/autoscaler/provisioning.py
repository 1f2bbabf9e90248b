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
from allocation.engine.quiet import Quiet

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


class ProvisioningController:
    """Reconciles ProvisioningRequests and unschedulable pods with the node groups."""

    name = "autoscaler"

    def __init__(self, strategy: str = "first-fit") -> None:
        self.strategy = strategy
        self.retry_at: dict[ObjectKey, _Retry] = {}
        self.told: dict[tuple, str] = {}  # (object key, topic) -> last message, no repeats
        # pods whose annotations need no warning, until the pod changes (engine/quiet.py)
        self.checked = Quiet()

    # -- the pass -----------------------------------------------------------------------
    def begin_pass(self) -> None:
        """A new worker pass on the kept state (``services/incremental.py``): what was told
        is told again, as a pass that builds the whole cluster tells it."""
        self.told.clear()

    def carry(self, other: ProvisioningController, state: ClusterState) -> None:
        """Remember which pods ``other`` (on the state ``state`` was forked from) found with
        nothing to warn about, so a scenario's fork (``Simulation.fork``) checks the
        annotations of the pods it changed, not of every pod. What was told is not carried:
        a fork tells again what a simulation of its documents would tell (a pod with an
        incomplete pair is never remembered, so it is checked, and told, again)."""
        self.checked = other.checked.fork_for(state)

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
        pair = (limits.SEED_CLASS_ANNOTATION, limits.SEED_CONSUME_ANNOTATION)

        def check(pod: Pod) -> None:
            notes = pod.meta.annotations
            if not notes:  # most pods: nothing to tell (asked per pod a round touched)
                self.checked.remember(pod, ())
                return
            present = [a for a in pair if notes.get(a)]
            if len(present) == 1 and not notes.get(limits.CONSUME_ANNOTATION):
                missing = next(a for a in pair if a not in present)
                self._tell(state, pod, "annotations", "Warning", "IncompleteConsumeAnnotations",
                           f"pod has {present[0]} but not {missing}: both are needed to consume "
                           "a ProvisioningRequest, so the pod is treated as an ordinary pod")
            else:
                self.checked.remember(pod, ())

        self.checked.observe(state)
        each(state, self.name, self.checked.unknown_of(state, Pod), check)

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
        waiting = [p for p in state.pods() if not p.node_name and not p.terminated
                   and (p.condition("PodScheduled") or {}).get("status") == "False"
                   and consumes(p) is None]
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
