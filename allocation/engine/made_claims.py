"""The v1 claims made from templates, by the pod entry they were made for (docs/v1.md,
"Template claims"): what the v1 claim controller (``claims_v1.py``) asks before it makes a
claim, so that a claim made earlier is adopted rather than made twice.

:class:`MadeIndex` keeps the answer between rounds and passes, in step with the keys the
state touched (``engine/touched_since.py``), and is copied into a scenario's fork.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from allocation.engine.constants import POD_CLAIM_NAME_ANNOTATION
from allocation.engine.objects import KObject, ObjectKey, ResourceClaimV1
from allocation.engine.touched_since import TouchedSince

if TYPE_CHECKING:
    from allocation.engine.state import ClusterState

__all__ = ["MadeIndex", "made_entry"]


def made_entry(claim: KObject | None) -> tuple | None:
    """``(namespace, pod uid, pod claim name)`` of a v1 claim made from a template for a
    pod, or None (not a v1 claim, no owning pod or no pod claim name annotation)."""
    if not isinstance(claim, ResourceClaimV1):
        return None
    owner = claim.owner_pod
    entry = claim.meta.annotations.get(POD_CLAIM_NAME_ANNOTATION)
    if owner is None or entry is None:
        return None
    return claim.namespace, owner[1], entry


class MadeIndex:
    """Every v1 claim made from a template, by :func:`made_entry`, kept in step with the
    state from the keys it touched (``engine/touched_since.py``) instead of walking every
    claim each round a pod needs one (0.13 CPU-s a kept pass at 5,000 nodes).

    Two claims with one entry (a stored cluster may hold such): the walk of every claim
    in document order kept the last; while any entry has more than one claim the answer
    is that walk, so it stays the same.
    """

    def __init__(self) -> None:
        self._since = TouchedSince()
        self._entries: dict[ObjectKey, tuple] = {}  # claim key -> its entry
        self._claims: dict[tuple, ResourceClaimV1] = {}  # entry -> its claim
        self._crowded: dict[tuple, set[ObjectKey]] = {}  # entry -> its claims' keys, if 2+

    def behind(self, state: ClusterState) -> bool:
        """Whether ``state`` is another state than the last look's, or put another touched
        list in place since (a new pass: ``engine/touched_since.py``)."""
        return self._since.behind(state)

    def claims(self, state: ClusterState) -> dict[tuple, ResourceClaimV1]:
        """Entry -> claim over the state's claims now (the walk's answer); the dict is
        this index's own and changes at its next call."""
        keys = self._since.keys(state)
        objects = state.objects
        if keys is None:
            # another state (or the first): start again from a walk of it
            self._entries, self._claims, self._crowded = {}, {}, {}
            for claim in state.of_kind(ResourceClaimV1):
                self._put(claim.key, claim)
        else:
            keys = {key for key in keys if key.kind == "ResourceClaim"}
            for key in keys:  # every touched claim leaves first: none is held twice
                self._drop(key, objects)
            for key in keys:
                self._put(key, objects.get(key))
        if self._crowded:
            return {e: c for c in state.of_kind(ResourceClaimV1)
                    if (e := made_entry(c)) is not None}
        return self._claims

    def fork_for(self, fork: ClusterState) -> MadeIndex:
        """What this index knows, for ``fork`` (just made by ``ClusterState.fork`` of the
        state this index last looked at, sharing every claim): brought up to date with that
        state first, then copied (pointer copies), so a scenario's fork does not walk every
        claim at its first round (``ClaimController.carry``). Callers that fork from several
        threads hold a lock (``Simulation.fork``), as this index changes too."""
        twin = MadeIndex()
        parent = self._since.state
        if parent is None:
            return twin
        self.claims(parent)
        twin._entries, twin._claims = dict(self._entries), dict(self._claims)
        twin._crowded = {entry: set(keys) for entry, keys in self._crowded.items()}
        twin._since = self._since.fork_for(fork)
        return twin

    def _put(self, key: ObjectKey, claim: KObject | None) -> None:
        entry = made_entry(claim)
        if entry is None:
            return
        self._entries[key] = entry
        crowd = self._crowded.get(entry)
        if crowd is not None:
            crowd.add(key)
            return
        held = self._claims.get(entry)
        if held is None or held.key == key:
            self._claims[entry] = claim
        else:  # a second claim with this entry
            self._crowded[entry] = {held.key, key}

    def _drop(self, key: ObjectKey, objects: dict) -> None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return
        crowd = self._crowded.get(entry)
        if crowd is None:  # (gone already when the crowd it left dropped it)
            self._claims.pop(entry, None)
            return
        crowd.discard(key)
        if len(crowd) == 1:  # the one left is the entry's claim again
            del self._crowded[entry]
            left = objects.get(next(iter(crowd)))
            if left is None:  # dropped too, later in this look: _put gives it back
                del self._claims[entry]
            else:
                self._claims[entry] = left
