"""What the v1 scheduler hands the allocator and keys its caches by (docs/v1.md, "Simulating
v1", speed): light views of claims and nodes (identity, spec, labels: shared, never
copied per node) and the signature that makes two pods' attempts alike.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from allocation.engine.scheduling.cache import pod_signature

if TYPE_CHECKING:
    from allocation.engine.objects import Node, Pod, ResourceClaimV1
    from allocation.engine.v1 import Attempt

__all__ = ["PodAttempt", "claim_doc", "node_doc", "same_node_state", "signature"]


class PodAttempt:
    """One pod's scheduling attempt: its claims, the allocator views of the unallocated
    ones (made at the first node that asks for them, not per node, and not at all for a
    pod answered without a search: an identical pod's failure), and the extended resources
    DRA may serve."""

    __slots__ = ("claims", "pending", "all_pending", "extended", "check_capacity", "search",
                 "_docs")

    def __init__(self, claims: list[ResourceClaimV1]) -> None:
        self.claims = claims
        # the unallocated claims, and whether that is every claim (the usual pod's)
        self.pending = [c for c in claims if not c.allocated]
        self.all_pending = len(self.pending) == len(claims)
        self.extended: list[str] = []
        self.check_capacity = True
        # the allocator's attempt of ``docs`` (Allocator.attempt: nodes known to have
        # nothing free are answered without a search), made at the first node that gets
        # that far
        self.search: Attempt | None = None
        self._docs: list[dict] | None = None

    @classmethod
    def of(cls, claims: list[ResourceClaimV1]) -> PodAttempt:
        """The attempt of a pod with ``claims``."""
        return cls(claims)

    @property
    def docs(self) -> list[dict]:
        """The allocator views of the unallocated claims (``claim_doc``), made once."""
        docs = self._docs
        if docs is None:
            docs = self._docs = [claim_doc(c) for c in self.pending]
        return docs


def signature(pod: Pod, attempt: PodAttempt) -> tuple | None:
    """What makes two pods' attempts alike: namespace, node constraints, cpu and memory,
    the claims' specs (all unallocated) and the extended requests.

    Returns:
        The key, or None when a claim of ``attempt`` is allocated
        or the pod waits on a node (its attempt is its own).
    """
    if not attempt.all_pending or pod.nominated_node_name:
        return None
    extended = ()
    if attempt.extended:
        spec = pod.raw.get("spec") or {}
        extended = tuple(json.dumps((c.get("resources") or {}).get("requests"), sort_keys=True)
                         for c in [*(spec.get("initContainers") or ()),
                                   *(spec.get("containers") or ())])
    return (*pod_signature(pod), extended, *[c.spec_key for c in attempt.claims])


def same_node_state(before: tuple | None, now: tuple | None) -> bool:
    """Whether two of ``V1Scheduling._node_state``'s snapshots are of the same node state:
    the same node and usage objects, the same pool versions."""
    return (before is not None and now is not None and before[0] is now[0]
            and before[1] is now[1] and before[2] == now[2])


def claim_doc(claim: ResourceClaimV1) -> dict:
    """The view of an unallocated claim the allocator reads: identity and spec (shared)."""
    return {"apiVersion": claim.api_version, "kind": "ResourceClaim",
            "metadata": {"name": claim.name, "namespace": claim.namespace,
                         "uid": claim.meta.uid},
            "spec": claim.spec}


def node_doc(node: Node) -> dict:
    """The view of a node the allocator reads: name, labels and status (shared)."""
    return {"metadata": {"name": node.name, "labels": node.meta.labels},
            "status": node.raw.get("status") or {}}
