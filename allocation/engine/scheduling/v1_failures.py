"""The v1 scheduler's failures, kept per pod signature for one settle (docs/v1.md "Speed").

A pod that fits no node is marked unschedulable with its explanation (``v1_explain``,
``diagnosis``). A later pod of the same signature (``v1_views.signature``: the pending
pods of one template) is answered from that failure while nothing that could change a
node's answer happened (:meth:`Failures.unchanged`): the same message, and the annotation
rendered once, renamed for the pod's own claims (``renaming``), so it is byte-identical to
explaining that pod alone. Each node's answer is kept too, for a later scan within the
same epoch to reuse on a node whose state is the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from allocation.engine.scheduling import (
    binding,
    diagnosis,
    diagnosis_devices,
    renaming,
    v1_explain,
    v1_extended,
)

if TYPE_CHECKING:
    from allocation.engine.objects import Pod, ResourceClaimV1
    from allocation.engine.scheduling.v1_book import AllocatorSource
    from allocation.engine.state import ClusterState
    from allocation.engine.v1 import Allocator

__all__ = ["Failure", "Failures"]


class Failure(NamedTuple):
    """One signature's failure: when it happened (:meth:`Failures.unchanged`), what it said
    (message, the scheduler's ``{"node", "reason"}`` details) and each node's answer
    (node name -> (the node's state, its refusal))."""

    seen: tuple
    failure: tuple[str, list[dict]]
    answers: dict


class Failures:
    """The failures of one settle's rounds, by pod signature.

    ``source`` is the scheduler's ``AllocatorSource`` (its version moves with every commit
    and release) and ``memo`` the explanation's per-round ``RequestMemo``.
    """

    def __init__(self, source: AllocatorSource, memo: v1_explain.RequestMemo) -> None:
        self._source, self._memo = source, memo
        # read by the scheduler for every pod (a lookup, not a call): written only here
        self.kept: dict[tuple | None, Failure] = {}
        # the annotation last rendered per signature, with the details it explained
        self._rendered: dict[tuple, tuple[list[dict], renaming.Rendered]] = {}
        # FailedScheduling events fail() recorded: they change no node's answer, so
        # unchanged() does not count them (pending pods of two signatures alternate)
        self._own_events = 0

    def begin_settle(self) -> None:
        """A new settle: the state may have been changed by anyone since the last round
        (a kept pass's writes, a caller's edits), so no failure is reused."""
        self.kept, self._rendered = {}, {}

    def forget(self) -> None:
        """Devices were freed within the pass: no failure holds (the renderings stay, as
        each is reused only for the very details it explained)."""
        self.kept = {}

    def unchanged(self, state: ClusterState) -> tuple:
        """What moves whenever a node's answer to a pod may change within a settle: the epoch
        (pod capacity released, nodes), the book's version (every commit, release and
        sync), and the events (every bind records Scheduled, whichever scheduler half made
        it) but the FailedScheduling ones :meth:`fail` recorded."""
        return (state.epoch, self._source.version, len(state.events.items) - self._own_events)

    def fail(self, state: ClusterState, allocator: Allocator, pod: Pod,
             claims: list[ResourceClaimV1], key: tuple | None, message: str,
             details: list[dict], answers: dict | None = None) -> bool:
        """Mark ``pod`` unschedulable, explained with its own claims (``v1_explain``), and
        keep the failure for pods of signature ``key`` (``answers``: node name -> (state,
        reason); the kept failure's when None).

        Returns:
            False (nothing was placed).
        """
        if key is not None and answers is None:
            answers = self.kept[key].answers
        refs = v1_explain.pending_refs(claims)
        text = self._renamed(key, details, refs)
        if text is None:
            body = v1_explain.detail(state, allocator, claims, details, len(state.node_order),
                                     self._memo, v1_extended.claims_by_node(
                                         state, pod, allocator.profile,
                                         self._source.class_docs))
            devices = diagnosis_devices.V1Devices(state, pod, allocator, claims, self._memo)
            diagnosis.annotate(body, state, pod, diagnosis.v1_reasons(answers, details), devices)
            rendered = renaming.render(message, body, refs)
            text = rendered.text
            if key is not None:
                self._rendered[key] = (details, rendered)
        self._mark(state, pod, message, text)
        if key is not None:
            self.kept[key] = Failure(self.unchanged(state), (message, details), answers)
        return False

    def fail_again(self, state: ClusterState, allocator: Allocator, pod: Pod,
                   claims: list[ResourceClaimV1], key: tuple,
                   failure: tuple[str, list[dict]]) -> bool:
        """:meth:`fail` for a pod whose identical pod failed with ``failure`` (message,
        details) while nothing changed since (:meth:`unchanged`): the rendered annotation
        renamed for ``claims``. What ``fail`` would keep again it has already (this
        marking changes neither the epoch nor the book, and its own events are not
        counted), so nothing is kept again (asked per pending pod).

        Returns:
            False (nothing was placed).
        """
        message, details = failure
        text = self._renamed(key, details, v1_explain.pending_refs(claims))
        if text is None:  # a claim's name the text quotes elsewhere: explained afresh
            return self.fail(state, allocator, pod, claims, key, message, details)
        self._mark(state, pod, message, text)
        return False

    def _renamed(self, key: tuple | None, details: list[dict], refs: list[str]) -> str | None:
        """The text rendered for ``key``'s failure with these very ``details``, renamed
        for ``refs`` (None: none, or it cannot be renamed)."""
        known = self._rendered.get(key) if key is not None else None
        return renaming.renamed(known[1], refs) if known and known[0] is details else None

    def _mark(self, state: ClusterState, pod: Pod, message: str, text: str) -> None:
        events = len(state.events.items)
        binding.mark_unschedulable(state, pod, message, {}, explain=text)
        self._own_events += len(state.events.items) - events
