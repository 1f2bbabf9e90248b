"""Confining a failure to the object it happened on: report it there, go on with the rest.

A controller handles objects one at a time. An unexpected exception while it handles one
object (a bug, or an input the engine cannot handle, such as a document nested so deeply
that copying it overflows the stack) must not stop the simulation, and with it the worker's
pass, for every other object. :func:`each` runs a controller's work object by object; when
the work fails, :func:`report` records the failure on the object and every controller
leaves that object alone for the rest of the simulation (``ClusterState.failures``).

A failure is reported three ways (see ``docs/console.md``, "Failures"):

- the annotation :data:`ERROR_ANNOTATION` on the object (every kind has annotations); it is
  removed again by the first simulation in which the object no longer fails;
- a pod not bound yet gets the condition ``PodScheduled`` ``False`` with reason
  :data:`SCHEDULER_ERROR`, as kube-scheduler reports its own internal errors;
- a Warning Event with reason :data:`EVENT_REASON` naming the error, recorded once per
  distinct error (not again while the same error repeats, so passes reach a fixed point).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from allocation.engine.objects import KObject, Pod

if TYPE_CHECKING:
    from allocation.engine.state import ClusterState

__all__ = ["ERROR_ANNOTATION", "SCHEDULER_ERROR", "EVENT_REASON", "Failure", "describe", "each",
           "report", "clear_recovered", "carry_flagged", "fallback_manifest"]

ERROR_ANNOTATION = "draplanner.io/reconcile-error"
SCHEDULER_ERROR = "SchedulerError"
EVENT_REASON = "ReconcileError"
_COMPONENT = "draplanner-simulation"
_MAX_MESSAGE = 300

_T = TypeVar("_T", bound=KObject)


@dataclass(frozen=True)
class Failure:
    """What failed on an object: the stage (a controller's name, ``writer``, ``loader``), the
    one-line text reported, and the exception itself (for the worker's log)."""

    stage: str
    text: str
    error: BaseException | None = None


def describe(stage: str, error: BaseException) -> str:
    """``stage: ExceptionType: message``, one line, stable while the same error repeats.

    Returns:
        The text reported on the object. A RecursionError's message names where the stack
        ran out (``while calling a Python object``, ``while encoding ...``), which differs
        from run to run, so only its first clause is kept.
    """
    message = str(error).splitlines()[0] if str(error) else ""
    if isinstance(error, RecursionError):
        message = "maximum recursion depth exceeded (the object is nested too deeply)"
    text = f"{stage}: {type(error).__name__}" + (f": {message}" if message else "")
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE - 3] + "..."


def each(state: ClusterState, stage: str, objects: Iterable[_T], work: Callable[[_T], Any]) -> bool:
    """Call ``work(obj)`` for every object that has not failed yet in this simulation.

    An exception from ``work`` is confined to its object (:func:`report`); the others are
    still worked on.

    Returns:
        Whether any call returned a true value (the controllers' "something changed").
    """
    changed = False
    failures = state.failures
    for obj in objects:
        if failures and obj.key in failures:
            continue
        try:
            changed |= bool(work(obj))
        except Exception as error:  # noqa: BLE001 - confined to the object, reported on it
            report(state, obj, stage, error)
    return changed


def report(state: ClusterState, obj: KObject, stage: str, error: BaseException | None,
           text: str | None = None) -> Failure:
    """Record that ``stage`` failed on ``obj``; every controller skips it from now on.

    An object of the state is marked (annotation; condition on a pod not yet bound); an
    object that is not in the state (a stored row that could not be loaded) only gets the
    Event. Either way the Event is not recorded again if the last one about the object with
    this reason says the same. ``text`` replaces :func:`describe`'s.

    Returns:
        The :class:`Failure` now in ``state.failures``.
    """
    text = text or describe(stage, error)
    failure = Failure(stage, text, error)
    state.failures[obj.key] = failure
    current = state.objects.get(obj.key)
    if current is not None:
        target = state.writable(current)
        target.meta.annotations[ERROR_ANNOTATION] = text
        if isinstance(target, Pod) and not target.node_name:
            target.set_condition({"type": "PodScheduled", "status": "False",
                                  "reason": SCHEDULER_ERROR, "message": text,
                                  "lastTransitionTime": state.clock.stamp()})
        obj = target
    message = (f"{text}; this object is skipped until the error no longer happens "
               "(the other objects are reconciled as usual)")
    if _last_message(state, obj) != message:
        state.events.record(obj, "Warning", EVENT_REASON, message, component=_COMPONENT)
    return failure


def _last_message(state: ClusterState, obj: KObject) -> str | None:
    """The message of the last :data:`EVENT_REASON` Event about ``obj``, if any."""
    for event in reversed(state.events.items):
        involved = event.get("involvedObject") or {}
        if (event.get("reason") == EVENT_REASON and involved.get("kind") == obj.kind_name
                and involved.get("name") == obj.name
                and (involved.get("namespace") or None) == (obj.namespace or None)):
            return event.get("message")
    return None


def clear_recovered(state: ClusterState) -> None:
    """Remove :data:`ERROR_ANNOTATION` from objects that did not fail in this simulation.

    The objects carrying it are found by :class:`_Flagged`, which walks every object once
    per state and then only the keys touched since, so a kept pass (docs/console.md, "The
    kept state") does not look at every object; they are cleared in document order.
    """
    flagged = _FLAGGED.get(state)
    if flagged is None:
        flagged = _FLAGGED[state] = _Flagged(state)
    else:
        flagged.update(state)
    failures, objects = state.failures, state.objects
    for key in state.in_order(flagged.keys):
        if key not in failures:
            state.writable(objects[key]).meta.annotations.pop(ERROR_ANNOTATION, None)
            flagged.keys.discard(key)


def carry_flagged(state: ClusterState, fork: ClusterState) -> None:
    """Let ``fork`` (just made by ``state.fork()``, sharing every object) start from the
    keys ``state`` knows carry :data:`ERROR_ANNOTATION`, so the first
    :func:`clear_recovered` of a scenario's fork does not walk every object
    (``Simulation.fork``). Nothing is carried when ``state`` was never cleared."""
    flagged = _FLAGGED.get(state)
    if flagged is None:
        return
    flagged.update(state)
    twin = _Flagged.__new__(_Flagged)
    twin.keys = set(flagged.keys)
    twin._touched, twin._read = fork.touched, len(fork.touched)
    _FLAGGED[fork] = twin


class _Flagged:
    """The keys of a state's objects that carry :data:`ERROR_ANNOTATION`, kept up to date
    from ``state.touched`` (every change of an object touches its key). It holds the
    state's ``touched`` list, never the state (the state is its weak key)."""

    def __init__(self, state: ClusterState) -> None:
        self.keys = {obj.key for obj in state.objects.values()
                     if ERROR_ANNOTATION in obj.meta.annotations}
        self._touched = state.touched
        self._read = len(state.touched)

    def update(self, state: ClusterState) -> None:
        """Look again at the objects touched since the last look (in a replaced
        ``touched`` list, the worker's catch-up's, the rest of the old one as well)."""
        touched = state.touched
        keys = set(self._touched[self._read:])
        if touched is not self._touched:
            keys.update(touched)
            self._touched = touched
        self._read = len(touched)
        objects = state.objects
        for key in keys:
            obj = objects.get(key)
            if obj is not None and ERROR_ANNOTATION in obj.meta.annotations:
                self.keys.add(key)
            else:
                self.keys.discard(key)


_FLAGGED: weakref.WeakKeyDictionary[ClusterState, _Flagged] = weakref.WeakKeyDictionary()
"""Per state: a state's objects are written by many callers, read here after each settle."""


def fallback_manifest(obj: KObject) -> dict:
    """The object's input document with only its metadata and conditions written back.

    For an object whose ``to_manifest`` fails (it deep-copies the document): the result
    shares everything else with the input, so it is only good for serialising at once.
    """
    out = dict(obj.raw)
    meta = dict(out.get("metadata") or {})
    obj.meta.write_into(meta)
    out["metadata"] = meta
    conditions = getattr(obj, "conditions", None)
    if conditions is not None:
        status = dict(out.get("status") or {})
        if conditions:
            status["conditions"] = [dict(c) for c in conditions]
        else:
            status.pop("conditions", None)
        out["status"] = status
    return out
