"""Bound pods with nothing to do, remembered until something they depend on changes.

Every round of every pass visits every pod. A bound pod whose claims are all allocated and
reserved for it has nothing to do, and stays so while the pod, its claims (and, for the
control-plane negotiation, its PodSchedulingContext) are the same objects, unchanged, and
its node exists. On a settled cluster that is almost every pod, and checking each again
(resolving its claims) was most of a round: the worker's kept state (docs/console.md,
"The kept state") settles a new pod among thousands of bound ones.

Changes are seen through ``ClusterState.changed`` (every change goes through ``writable``,
``add`` or ``remove``, which record the key there): at the start of each round the keys
changed since the last look drop the pods that depend on them. A state whose ``changed``
is a new set (the worker's catch-up) is looked at afresh.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from allocation.engine.objects import ObjectKey, Pod
    from allocation.engine.state import ClusterState

__all__ = ["QuietPods"]


class QuietPods:
    """The bound pods known to have nothing to do, and what each depends on."""

    def __init__(self) -> None:
        self._state: ClusterState | None = None
        self._changed: set | None = None
        self._seen: set = set()
        self._pods: dict[ObjectKey, Pod] = {}
        self._deps: dict[ObjectKey, set[ObjectKey]] = {}

    def observe(self, state: ClusterState) -> None:
        """Forget the pods whose dependencies changed since the last call (call at the
        start of every round)."""
        if state is not self._state:
            self._pods.clear()
            self._deps.clear()
        if state is not self._state or state.changed is not self._changed:
            self._state, self._changed, self._seen = state, state.changed, set()
        changed = state.changed
        if len(changed) == len(self._seen):
            return  # it only grows: nothing new
        for key in changed - self._seen:
            for pod_key in self._deps.pop(key, ()):
                self._pods.pop(pod_key, None)
        self._seen = set(changed)

    def known(self, state: ClusterState, pod: Pod) -> bool:
        """Whether ``pod`` (bound) is known to have nothing to do."""
        return self._pods.get(pod.key) is pod and pod.node_name in state.nodes

    def remember(self, pod: Pod, deps: Iterable[ObjectKey]) -> None:
        """``pod`` has nothing to do while it and ``deps`` do not change."""
        self._pods[pod.key] = pod
        for key in (pod.key, *deps):
            self._deps.setdefault(key, set()).add(pod.key)
