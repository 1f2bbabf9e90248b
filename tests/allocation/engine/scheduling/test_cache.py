"""The placement cache (``allocation/engine/scheduling/cache.py``)."""

from __future__ import annotations

from allocation.engine.scheduling.cache import PlacementCache


def test_twins_resume_where_the_last_one_was_placed_until_the_epoch_changes():
    cache: PlacementCache[str] = PlacementCache()
    assert cache.start(("p",), 0) == 0
    cache.placed(("p",), 0, 3)
    assert cache.start(("p",), 0) == 3
    assert cache.start(("q",), 0) == 0
    assert cache.start(("p",), 1) == 0


def test_a_failure_is_remembered_for_its_epoch_and_ends_the_scan():
    cache: PlacementCache[str] = PlacementCache()
    cache.failed(("p",), 2, 10, "no node")
    assert cache.failure(("p",), 2) == "no node"
    assert cache.start(("p",), 2) == 10
    assert cache.failure(("p",), 3) is None
    assert cache.start(("p",), 3) == 0
