"""``simulate``: run every controller on an isolated state until nothing changes.

The controllers (claim controller, scheduler, drivers, autoscaler: a fixed list) each reconcile
the state once per round; the simulation stops at the first round in which none changed
anything. A virtual clock stamps events; ``advance`` moves it forward, running due timers.

No single object stops a simulation: a controller's failure on one object is confined to it
(``faults.py``), and a failure a controller could not pin on an object disables that
controller for the rest of the simulation (``failures``) while the others go on. An optional
``checkpoint`` is called before every controller runs; the worker renews its lease there
and raises to stop at once when it lost it (``docs/console.md``, "Lease").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from allocation.engine import kinds
from allocation.engine.autoscaler.provisioning import ProvisioningController
from allocation.engine.claims import ClaimController
from allocation.engine.controller import Controller
from allocation.engine.controlplane.driver import DriverController
from allocation.engine.controlplane.negotiation import Negotiation
from allocation.engine.events import DEFAULT_START, VirtualClock
from allocation.engine.faults import Failure, carry_flagged, clear_recovered, describe
from allocation.engine.gcpause import paused_gc
from allocation.engine.manifests import InvalidManifests, LoadResult, Problem, load_files
from allocation.engine.scheduler import Scheduler
from allocation.engine.state import ClusterState
from allocation.engine.v1 import Profile
from allocation.engine.writer import as_list, dump_list_to

__all__ = ["Simulation", "simulate", "simulate_files", "simulate_to", "CONTROLLER_FACTORIES",
           "MAX_ROUNDS", "refuse_unsimulated_v1"]

MAX_ROUNDS = 10_000

_FORKING = threading.Lock()

CONTROLLER_FACTORIES: list[Callable[[str], Controller]] = [
    lambda strategy: ClaimController(),
    lambda strategy: Scheduler(strategy, Negotiation(strategy)),
    lambda strategy: DriverController(),  # control-plane controllers (seed 004)
    lambda strategy: ProvisioningController(strategy),  # node groups, ProvisioningRequests
]
"""Controllers in the order they run each round (``allocation/engine/controller.py``)."""


@dataclass
class Simulation:
    """An isolated state and the controllers that act on it."""

    state: ClusterState
    strategy: str = "first-fit"
    controllers: list[Controller] = field(default_factory=list)
    rounds: int = 0
    checkpoint: Callable[[], None] | None = None
    # Failures of a whole controller (not pinned on an object); it is skipped from then on.
    failures: list[Failure] = field(default_factory=list)

    @classmethod
    def from_loaded(cls, loaded: LoadResult, strategy: str = "first-fit",
                    now: datetime = DEFAULT_START) -> Simulation:
        return cls.on(ClusterState.build(loaded, VirtualClock(now)), strategy)

    @classmethod
    def on(cls, state: ClusterState, strategy: str = "first-fit",
           checkpoint: Callable[[], None] | None = None) -> Simulation:
        """A simulation of ``state`` (changed in place) with every controller."""
        controllers = [make(strategy) for make in CONTROLLER_FACTORIES]
        _connect(controllers)
        return cls(state, strategy, controllers, checkpoint=checkpoint)

    def fork(self, strategy: str | None = None) -> Simulation:
        """A simulation of ``state.fork()`` (``strategy``: this one's by default) whose
        controllers remember what this one's found needing nothing (``engine/quiet.py``),
        so settling the fork after a few changes visits what they touched, not everything.

        Returns:
            The new simulation. This one's objects are not changed; its controllers' memos
            are brought up to date with its state (what they would do at their next look)
            and its state gets a new copy-on-write token.
        """
        # a console forks one cached baseline from several threads: forking touches the
        # parent (its copy-on-write token, its controllers' memos catching up)
        with _FORKING:
            child = Simulation.on(self.state.fork(), strategy or self.strategy)
            carry_flagged(self.state, child.state)
            for mine, theirs in zip(self.controllers, child.controllers, strict=True):
                carry = getattr(theirs, "carry", None)
                if carry is not None and type(mine) is type(theirs):
                    carry(mine, child.state)
        return child

    def settle(self) -> int:
        """Reconcile until a round changes nothing; returns the rounds run.

        Raises:
            RuntimeError: no fixed point after ``MAX_ROUNDS`` rounds; whatever
                ``checkpoint`` raises (the simulation stops at once).
        """
        for controller in self.controllers:  # what a controller keeps for one settle
            begin = getattr(controller, "begin_settle", None)
            if begin is not None:
                begin()
        for rounds in range(1, MAX_ROUNDS + 1):
            changed = False
            for controller in self.controllers:
                if self.checkpoint is not None:
                    self.checkpoint()
                changed |= self._reconcile(controller)
            if not changed:
                self.rounds += rounds
                clear_recovered(self.state)
                return rounds
        raise RuntimeError(f"no fixed point after {MAX_ROUNDS} rounds")

    def warm(self) -> None:
        """Bring what the controllers keep lazily between passes up to date with the state
        now (each controller's ``warm``, if it has one): for a caller with time to spare
        after a pass (the console's worker, once the pass is saved), so the next pass, on
        the path of the write that wakes it, does not pay for what this one changed."""
        for controller in self.controllers:
            warm = getattr(controller, "warm", None)
            if warm is not None and not (self.failures and self._broken(controller)):
                warm(self.state)

    def _broken(self, controller) -> bool:
        return any(f.stage == _name(controller) for f in self.failures)

    def _reconcile(self, controller) -> bool:
        if self.failures and self._broken(controller):
            return False
        try:
            return bool(controller.reconcile(self.state))
        except Exception as error:  # noqa: BLE001 - one controller must not stop the others
            self.failures.append(Failure(_name(controller), describe(_name(controller), error),
                                         error))
            return False

    def next_wakeup(self) -> datetime | None:
        """The earliest time a controller's timer falls due (back-off, expiry), if any."""
        due = []
        for controller in self.controllers:
            if self.failures and self._broken(controller):
                continue
            try:
                moment = controller.next_wakeup(self.state)
            except Exception as error:  # noqa: BLE001 - as in _reconcile
                self.failures.append(Failure(_name(controller),
                                             describe(_name(controller), error), error))
                continue
            if moment is not None:
                due.append(moment)
        return min(due, default=None)

    def advance(self, duration: timedelta) -> None:
        """Move the clock forward, waking controllers whose timers fall due on the way."""
        end = self.state.clock.now + duration
        while True:
            due = self.next_wakeup()
            if due is None or due > end:
                break
            self.state.clock.advance_to(due)
            self.settle()
        self.state.clock.advance_to(end)
        self.settle()

    def output(self, shared: bool = False) -> dict:
        """Every object and then the Events, as a List document. ``shared``: parts of
        the input documents the planner did not change are the state's own, not copies
        (``KObject.to_manifest``), for a caller that only writes the result out."""
        return as_list(list(self.output_items(shared)))

    def output_items(self, shared: bool = False) -> Iterator[dict]:
        """The items of :meth:`output`, each object's document made as it is asked for:
        ``simulate`` writes them as they come (``writer.dump_list_to``), so a large
        cluster's documents are never all held at once (docs/architecture.md "Speed")."""
        for obj in self.state.all_objects():
            yield obj.to_manifest(shared)
        yield from self.state.events.items


def _connect(controllers: list[Controller]) -> None:
    """Tell the controllers with a ``pod_bound`` method of each pod a scheduler binds
    (``Scheduler.bound_listeners``), so they remember what their next visit would find."""
    listeners = [c.pod_bound for c in controllers if hasattr(c, "pod_bound")]
    for controller in controllers:
        if isinstance(controller, Scheduler):
            controller.bound_listeners.extend(listeners)


def _name(controller) -> str:
    return getattr(controller, "name", type(controller).__name__)


def refuse_unsimulated_v1(loaded: LoadResult) -> None:
    """Refuse what ``simulate`` cannot simulate of resource.k8s.io/v1 (docs/v1.md,
    "Simulating v1"), with one problem per object rather than an internal error.

    Simulated: DeviceClasses, ResourceSlices, ResourceClaims and ResourceClaimTemplates
    (``claims_v1.py``, ``scheduling/v1.py``). Refused: a pod (or a PodTemplate, whose pods a
    ProvisioningRequest makes) whose claims mix v1 claims or templates with seed (v1alpha2)
    ones; upstream has no seed dialect, so no rule says how
    one scheduling attempt would treat both.

    Raises:
        InvalidManifests: one problem per refused object.
    """
    dialects = {}
    for obj in loaded.objects:
        if obj.kind_spec in (kinds.RESOURCE_CLAIM_V1, kinds.RESOURCE_CLAIM,
                             kinds.RESOURCE_CLAIM_TEMPLATE_V1, kinds.RESOURCE_CLAIM_TEMPLATE):
            dialects[(obj.kind_name, obj.namespace, obj.name)] = obj.kind_spec in (
                kinds.RESOURCE_CLAIM_V1, kinds.RESOURCE_CLAIM_TEMPLATE_V1)
    found = []
    for obj in loaded.objects:
        if obj.kind_spec == kinds.POD:
            entries, path = [(c.template_name, c.claim_name) for c in obj.claims], "spec"
        elif obj.kind_spec == kinds.POD_TEMPLATE:  # a ProvisioningRequest's pods
            spec = obj.template.get("spec") or {}
            entries = [(e.get("resourceClaimTemplateName"), e.get("resourceClaimName"))
                       for e in spec.get("resourceClaims") or () if isinstance(e, dict)]
            path = "template.spec"
        else:
            continue
        v1 = {dialects.get(("ResourceClaimTemplate", obj.namespace, template) if template
                           else ("ResourceClaim", obj.namespace, claim))
              for template, claim in entries}
        if True in v1 and False in v1:
            found.append(_not_simulated(
                obj, f"{path}.resourceClaims", "a pod's claims and claim templates must be "
                "all resource.k8s.io/v1 or all seed (v1alpha2) ones to be simulated "
                "(docs/v1.md)"))
    if found:
        raise InvalidManifests(found)


def _not_simulated(obj, path: str, message: str) -> Problem:
    return Problem(obj.source.file if obj.source else "", obj.source.doc if obj.source else 0,
                   obj.kind_name, obj.namespace, obj.name, path, message)


def simulate(loaded: LoadResult, strategy: str = "first-fit", now: datetime = DEFAULT_START,
             advance: timedelta | None = None) -> Simulation:
    """Simulate loaded manifests to a fixed point (and ``advance`` further).

    Raises:
        InvalidManifests: for resource.k8s.io/v1 objects not simulated yet
            (:func:`refuse_unsimulated_v1`).
    """
    refuse_unsimulated_v1(loaded)
    with paused_gc():  # allocation-heavy batch (gcpause.py)
        simulation = Simulation.from_loaded(loaded, strategy, now)
        simulation.settle()
        if advance:
            simulation.advance(advance)
    return simulation


def simulate_files(paths: Sequence[str], strategy: str = "first-fit",
                   now: datetime = DEFAULT_START, advance: timedelta | None = None,
                   output: str = "yaml", profile: Profile | None = None,
                   warn: Callable[[Problem], None] | None = None) -> str:
    """The ``simulate`` command's output text for ``paths``: :func:`simulate_to`'s pieces,
    joined.

    Raises:
        InvalidManifests: as :func:`simulate`, or for invalid input.
    """
    pieces: list[str] = []
    simulate_to(pieces.append, paths, strategy, now, advance, output, profile, warn)
    return "".join(pieces)


def simulate_to(write: Callable[[str], object], paths: Sequence[str],
                strategy: str = "first-fit", now: datetime = DEFAULT_START,
                advance: timedelta | None = None, output: str = "yaml",
                profile: Profile | None = None,
                warn: Callable[[Problem], None] | None = None) -> None:
    """Write the ``simulate`` command's output for ``paths`` through ``write``, in pieces
    (:func:`~allocation.engine.writer.dump_list_to`), loaded and simulated under ``profile``
    (default: the newest release); ``warn`` gets each loading warning (a field dropped
    because its feature gate is off). Nothing is written unless the input is valid.

    Raises:
        InvalidManifests: as :func:`simulate`, or for invalid input.
    """
    with paused_gc():  # loading and writing allocate as much as settling (gcpause.py)
        loaded = load_files(paths, profile)
        for warning in loaded.warnings:
            if warn is not None:
                warn(warning)
        dump_list_to(write, simulate(loaded, strategy, now, advance).output_items(shared=True),
                     output)
