"""The v1 allocator's book kept in step with the claims (``scheduling/v1_book.py``)."""

from __future__ import annotations

import random

import pytest

from allocation.engine.objects import ObjectKey, ResourceClaimV1
from allocation.engine.scheduling.v1_book import AllocatorSource
from allocation.engine.simulation import simulate
from allocation.engine.touched_since import TouchedLog
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, load, slice_doc
from tests.factories import node

DEVICES = [f"gpu-{i}" for i in range(6)]


def _allocation(rng: random.Random) -> dict:
    return {"devices": {"results": [
        {"request": "r", "driver": "gpu.example.com", "pool": "node-1", "device": device}
        for device in rng.sample(DEVICES, rng.randrange(1, 3))]}}


def _walk(state) -> dict:
    """What the book must hold: every v1 claim's allocation (the walk ``_sync`` makes)."""
    return {c.ref: c.allocation for c in state.of_kind(ResourceClaimV1)
            if c.allocation is not None}


def _counts(per_pool: dict) -> dict:
    return {pool: count for pool, count in per_pool.items() if count}


def _cluster(rng: random.Random):
    docs = [node("node-1"), class_doc(),
            slice_doc([{"name": d} for d in DEVICES], nodeName="node-1")]
    docs += [claim_doc(name=f"c{i}", status={"allocation": _allocation(rng)})
             for i in range(4)]
    simulation = simulate(load(docs))
    state = simulation.state
    v1 = next(c for c in simulation.controllers if c.name == "scheduler").v1
    source, profile = v1.source, v1.profile(state)
    source.begin()
    source.ready(state, profile)
    return state, source, profile


def _change(rng: random.Random, state) -> None:
    """One change of a claim, as passes and catch-ups make them: added, allocated,
    deallocated or given other devices, removed; or the ``touched`` list replaced."""
    names = [c.name for c in state.of_kind(ResourceClaimV1)]
    op = rng.random()
    if op < 0.3 or not names:
        state.add(ResourceClaimV1(claim_doc(name=f"c{rng.randrange(8)}",
                                            status={"allocation": _allocation(rng)})))
    elif op < 0.7:
        claim = state.writable(state.objects[ObjectKey("ResourceClaim", "default",
                                                        rng.choice(names))])
        claim.allocation = None if rng.random() < 0.5 else _allocation(rng)
    elif op < 0.85:
        state.remove(state.objects[ObjectKey("ResourceClaim", "default", rng.choice(names))])
    else:
        state.touched = TouchedLog([], state.touched)


def _check(source: AllocatorSource, state, profile, where: str) -> None:
    """The book holds what a book synchronised from every claim holds."""
    source.begin()
    allocator = source.ready(state, profile)
    assert source.committed == _walk(state), where
    fresh = AllocatorSource()
    fresh.ready(state, profile)
    assert set(allocator.book.dedicated) == set(fresh.allocator.book.dedicated), where
    assert _counts(allocator.book.pool_dedicated) == \
        _counts(fresh.allocator.book.pool_dedicated), where


@pytest.mark.parametrize("seed", range(6))
def test_the_book_synchronised_from_the_touched_claims_holds_every_claims_allocation(seed):
    """Claims allocated, deallocated, given other devices, removed and added again between
    scheduler passes, the ``touched`` list replaced as the worker's catch-up does, passes
    that do not look at the book at all: at each look the book holds what a book
    synchronised from every claim holds."""
    rng = random.Random(seed)
    state, source, profile = _cluster(rng)
    for step in range(120):
        _change(rng, state)
        if rng.random() < 0.3:
            _check(source, state, profile, f"step {step}")


@pytest.mark.parametrize("seed", range(6))
def test_a_forks_book_is_its_parents_copied_then_kept_apart(seed):
    """A scenario's fork (``Scheduler.carry``): the book copied from the parent's, after
    changes of the parent it had not looked at yet; then the fork and the parent change
    apart, and each book holds its own state's claims."""
    rng = random.Random(seed)
    state, source, profile = _cluster(rng)
    for round_ in range(8):
        for _ in range(rng.randrange(0, 5)):  # not looked at by the parent's book yet
            _change(rng, state)
        fork = state.fork()
        twin = source.fork_for(fork)
        assert twin.allocator is not None and twin.allocator is not source.allocator
        for _ in range(rng.randrange(0, 8)):
            _change(rng, fork)
        _check(twin, fork, profile, f"fork, round {round_}")
        _change(rng, state)
        _check(source, state, profile, f"parent, round {round_}")


def test_the_source_is_synced_from_its_first_ready_until_the_next_pass(seed=3):
    """``synced`` gives the allocator ``ready`` would give without a look (the scheduler
    asks per pod), from a pass's first ``ready`` until ``begin``."""
    state, source, profile = _cluster(random.Random(seed))
    assert source.synced is source.allocator is not None
    source.begin()
    assert source.synced is None
    assert source.ready(state, profile) is source.synced
    assert AllocatorSource().synced is None
