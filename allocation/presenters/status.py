"""One status vocabulary for every page: the word each state is shown as, and its tone.

A state is said the same way on the dashboard, the object pages and the planner, and its
badge has one colour everywhere (``static/css/console.css``: ``.badge.ok``, ``warn``,
``info``, ``error``; no tone is the neutral badge). Templates render a state with
``{% load status %}{% status "pod" word %}`` (``allocation/templatetags/status.py``), never
with a hand-picked class. A pod on a node is *bound* (the simulation runs no kubelet, so its
phase stays Pending): it is never shown as a green "Pending".
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Status", "VOCABULARY", "POD_STATUS_STATES", "status", "pod_state"]


@dataclass(frozen=True, slots=True)
class Status:
    word: str
    tone: str  # "ok", "warn", "info", "error" or "" (neutral)
    meaning: str


def _states(*rows: tuple[str, str, str]) -> dict[str, Status]:
    return {word: Status(word, tone, meaning) for word, tone, meaning in rows}


VOCABULARY: dict[str, dict[str, Status]] = {
    "pod": _states(
        ("bound", "ok", "placed on a node by the scheduler"),
        ("pending", "warn", "not placed on a node yet"),
        ("succeeded", "", "finished; it holds nothing"),
        ("failed", "error", "finished with an error; it holds nothing"),
        ("terminating", "", "being deleted; it holds nothing"),
    ),
    "claim": _states(
        ("pending", "warn", "not allocated yet"),
        ("allocated", "info", "devices set aside, no pod reserves it yet"),
        ("reserved", "ok", "allocated and reserved for its pods"),
        ("deallocating", "warn", "its allocation is being released"),
        ("not created yet", "warn", "the pod names a claim that does not exist yet"),
    ),
    "device": _states(
        ("free", "ok", "no claim holds it"),
        ("allocated", "info", "a claim holds it"),
        ("shared", "info", "a multi-allocatable device some claims share"),
        ("blocked", "", "unusable while a sibling partition scheme is in use"),
    ),
}
"""kind -> word -> Status; the only place a state's word and tone are decided."""


_SAME = {"deallocationrequested": "deallocating"}
"""Words some presenters derive from API fields (``claim_status(...).lower()``) and the
vocabulary's word for the same state."""


POD_STATUS_STATES = {"Scheduled": "bound", "Unschedulable": "pending", "Pending": "pending",
                     "SchedulingGated": "pending", "Terminating": "terminating",
                     "Succeeded": "succeeded", "Failed": "failed"}
"""The pod status column's words (``models.pod.pod_status``, what the lists and the API
filter by) and the vocabulary's state each is shown as."""


def status(kind: str, word: str) -> Status:
    """The status ``word`` of ``kind`` (e.g. ``status("pod", "bound")``).

    Raises:
        KeyError: a kind or word outside the vocabulary (a page must not invent one).
    """
    word = _SAME.get(word, word)
    try:
        return VOCABULARY[kind][word]
    except KeyError:
        raise KeyError(f"{kind} state {word!r} is not in the status vocabulary") from None


def pod_state(pod) -> str:
    """``bound``, ``pending``, ``succeeded``, ``failed`` or ``terminating`` for an engine Pod."""
    if pod.phase in ("Succeeded", "Failed"):
        return pod.phase.lower()
    if pod.terminated:
        return "terminating"
    return "bound" if pod.node_name else "pending"
