"""The kept deadlines of the waits for binding conditions (``scheduling/v1_deadlines.py``)."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from allocation.engine.events import format_time, parse_time
from allocation.engine.objects import ObjectKey, ResourceClaimV1
from allocation.engine.scheduling.v1_deadlines import Deadlines
from allocation.engine.scheduling.v1_prebind import deadline
from allocation.engine.state import ClusterState
from allocation.engine.touched_since import TouchedLog

START = parse_time("2025-01-01T00:00:00Z")
RESULT = {"request": "r", "driver": "d", "pool": "p", "device": "g"}


def _claim(name: str, minute: int | None, waits: bool, reserved: bool) -> ResourceClaimV1:
    status = {}
    if minute is not None:
        result = {**RESULT, **({"bindingConditions": ["Ready"]} if waits else {})}
        status["allocation"] = {"devices": {"results": [result]}, "allocationTimestamp":
                                format_time(START.replace(minute=minute))}
    if reserved:
        status["reservedFor"] = [{"resource": "pods", "name": "p", "uid": "u"}]
    return ResourceClaimV1({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                            "metadata": {"name": name, "namespace": "default"},
                            "spec": {"devices": {}}, "status": status})


def _walk(state: ClusterState):
    """What ``next_wakeup`` walked every claim for before the kept deadlines: the first
    deadline still ahead of the clock."""
    due = [deadline(c) for c in state.of_kind(ResourceClaimV1)
           if c.allocation is not None and c.reserved_for]
    return min((d for d in due if d is not None and d > state.clock.now), default=None)


@pytest.mark.parametrize("seed", range(8))
def test_the_kept_deadlines_give_what_a_walk_of_every_claim_gives(seed):
    """Claims allocated (waiting or not), reserved or not, changed, removed and added
    again, the ``touched`` list replaced as the worker's catch-up does: the earliest kept
    deadline is the walk's."""
    rng, state, deadlines = random.Random(seed), ClusterState(), Deadlines()
    for step in range(200):
        names = [c.name for c in state.of_kind(ResourceClaimV1)]
        op = rng.random()
        if op < 0.5 or not names:
            state.add(_claim(f"c{rng.randrange(20)}", rng.choice([None, *range(30)]),
                             rng.random() < 0.7, rng.random() < 0.7))
        elif op < 0.7:  # deallocated or unreserved in place, as the controllers do
            claim = state.writable(state.objects[ObjectKey("ResourceClaim", "default",
                                                            rng.choice(names))])
            if rng.random() < 0.5:
                claim.allocation = None
            else:
                claim.reserved_for = []
        elif op < 0.9:
            state.remove(state.objects[ObjectKey("ResourceClaim", "default", rng.choice(names))])
        elif op < 0.95:
            state.touched = TouchedLog([], state.touched)
        else:  # a deadline passed needs no wakeup any more
            state.clock.advance_to(START + timedelta(minutes=rng.randrange(40)))
        if rng.random() < 0.3:
            assert deadlines.earliest(state) == _walk(state), f"step {step}"
    assert deadlines.earliest(state) == _walk(state)
    fork = state.fork()
    assert deadlines.earliest(fork) == _walk(fork)
