"""The v1 allocator's slice index, kept with the state (docs/v1.md, "Speed").

The seed scheduler finds its inventories built when a state is built
(``ClusterState.build``, ``inventory_cache.py``); the v1 allocator gathered every node's
visible pools (``v1/pools.SliceIndex``) inside the first pass of a settle. Here the index is
made with the state, every node's pools gathered, and kept on the state as
``ClusterState.v1_pools``: the v1 scheduler's allocators use it (``scheduling/v1_book.py``),
a fork shares it (the pools are answers about the slices, and no allocator changes a
slice), and when the state's ResourceSlices are other objects (added, replaced, removed:
a changed object is always another one, ``ClusterState.writable`` or ``add``), the next
look makes an updated index that keeps what the change cannot have touched
(``SliceIndex.updated``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from allocation.engine.objects import ResourceSlice
from allocation.engine.v1.features import Profile, make_profile
from allocation.engine.v1.pools import SliceIndex

if TYPE_CHECKING:
    from allocation.engine.state import ClusterState

__all__ = ["KeptIndex", "slice_index", "state_profile", "warm"]

_DEFAULT_PROFILE = make_profile()


class KeptIndex(NamedTuple):
    """A state's ResourceSlices as the allocator takes them, and their index."""

    slices: tuple[ResourceSlice, ...]
    """The objects indexed (kept alive, so comparing them by identity is sound)."""
    docs: tuple[dict, ...]
    """Their allocator views (``ResourceSlice.as_v1``), in the same order."""
    index: SliceIndex


def state_profile(state: ClusterState) -> Profile:
    """The Kubernetes profile v1 scheduling uses: the state's, else the newest release's."""
    return state.profile or _DEFAULT_PROFILE


def slice_index(state: ClusterState, profile: Profile) -> SliceIndex:
    """The index of the state's ResourceSlices under ``profile``: the kept one while the
    slices are the same objects, else an updated one (then kept in its place).

    Returns:
        The index; its pools and devices may be shared with forks of the state.
    """
    slices = tuple(state.of_kind(ResourceSlice))
    kept = state.v1_pools
    usable = kept is not None and kept.index.profile == profile
    if (
        usable
        and len(kept.slices) == len(slices)
        and all(a is b for a, b in zip(kept.slices, slices, strict=True))
    ):
        return kept.index
    # an unchanged object keeps its view: the index knows its slices by their views (the
    # kept objects are alive, so an id found is theirs only if the object is the same)
    views = (
        {id(obj): (obj, doc) for obj, doc in zip(kept.slices, kept.docs, strict=True)}
        if usable
        else {}
    )
    docs = tuple(_view(views, obj) for obj in slices)
    index = kept.index.updated(list(docs)) if usable else SliceIndex(list(docs), profile)
    state.v1_pools = KeptIndex(slices, docs, index)
    return index


def warm(state: ClusterState) -> None:
    """Index the state's ResourceSlices and gather every node's pools now (at build time,
    as the seed's inventories are), for the profile v1 scheduling will use."""
    if not state.has(ResourceSlice):
        return
    index = slice_index(state, state_profile(state))
    for name in state.node_order:
        node = state.nodes[name]
        index.pools_for({"metadata": {"name": name, "labels": node.meta.labels}})


def _view(views: dict[int, tuple[ResourceSlice, dict]], obj: ResourceSlice) -> dict:
    """The kept view of ``obj`` if it is a kept object, else a new one."""
    found = views.get(id(obj))
    return found[1] if found is not None and found[0] is obj else obj.as_v1()
