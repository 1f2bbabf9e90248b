"""The placement cache: where to resume the node scan for pods that ask for the same things.

Pods with equal ``PodNeeds.signature`` share a *cursor*, the first node that may still fit
them, and a remembered failure. Capacity only shrinks while pods are placed, so a node that
refused one pod refuses its twins too; any release of capacity bumps ``state.epoch``, which
makes every entry stale.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar

if TYPE_CHECKING:
    from allocation.engine.objects import Pod

__all__ = ["PlacementCache", "Failure", "pod_signature"]

F = TypeVar("F")


def pod_signature(pod: Pod) -> list:
    """What the node checks (``fit.node_refusal``) read of a pod: the start of every
    placement-cache key (the seed's ``PodNeeds.signature``, the v1 scheduler's key)."""
    selector = pod.node_selector  # most pods have none: nothing to sort
    return [pod.namespace, tuple(sorted(selector.items())) if selector else (),
            repr(pod.node_affinity), pod.cpu_milli, pod.memory,
            repr(pod.tolerations) if pod.tolerations else ""]


class _Cursor(NamedTuple):
    epoch: int
    index: int


class Failure(NamedTuple, Generic[F]):
    """Why pods of one signature fit no node, as of ``epoch``."""

    epoch: int
    why: F


class PlacementCache(Generic[F]):
    """Cursors and failures by pod signature; ``F`` is what a caller remembers of a failure."""

    def __init__(self) -> None:
        self._cursors: dict[tuple, _Cursor] = {}
        self._failures: dict[tuple, Failure[F]] = {}

    def start(self, key: tuple, epoch: int) -> int:
        """The node index to resume scanning from (0 when nothing is known for ``epoch``)."""
        cursor = self._cursors.get(key)
        return cursor.index if cursor is not None and cursor.epoch == epoch else 0

    def placed(self, key: tuple, epoch: int, index: int) -> None:
        """A pod of ``key`` was placed on node ``index``: its twins start there."""
        cursor = self._cursors.get(key)
        if cursor is None or cursor.index != index or cursor.epoch != epoch:
            # kept when it stands: twins placed on one node in a row make no new cursor
            self._cursors[key] = _Cursor(epoch, index)

    def failed(self, key: tuple, epoch: int, total: int, why: F) -> None:
        """No node fits pods of ``key``: remember ``why`` until the epoch changes."""
        self._failures[key] = Failure(epoch, why)
        self._cursors[key] = _Cursor(epoch, total)

    def failure(self, key: tuple, epoch: int) -> F | None:
        """The remembered failure of ``key`` if it is still current, else None."""
        failure = self._failures.get(key)
        return failure.why if failure is not None and failure.epoch == epoch else None
