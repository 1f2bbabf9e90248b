"""The incremental book of allocations."""

from __future__ import annotations

import pytest

from allocation.engine.v1.book import AllocationBook

DRV = "gpu.example.com"


def _alloc(*results):
    return {"devices": {"results": [dict(r, request="r", driver=DRV, pool="p")
                                    for r in results]}}


def test_commit_and_release_dedicated():
    book = AllocationBook()
    book.commit("ns/a", _alloc({"device": "d0"}))
    assert book.owner((DRV, "p", "d0")) == "ns/a"
    assert book.pool_dedicated[(DRV, "p")] == 1
    with pytest.raises(ValueError, match="already allocated to claim ns/a"):
        book.commit("ns/b", _alloc({"device": "d0"}))
    assert "ns/b" not in book
    book.release("ns/a")
    assert book.owner((DRV, "p", "d0")) is None
    assert book.pool_dedicated[(DRV, "p")] == 0
    book.release("ns/a")  # no-op


def test_admin_results_are_not_recorded_and_shared_sum_up():
    book = AllocationBook()
    book.commit("ns/a", _alloc({"device": "d0", "adminAccess": True}))
    assert book.owner((DRV, "p", "d0")) is None
    book.commit("ns/b", _alloc({"device": "nic", "shareID": "1",
                                "consumedCapacity": {"bw": "2"}}))
    book.commit("ns/c", _alloc({"device": "nic", "shareID": "2",
                                "consumedCapacity": {"bw": "3"}}))
    assert book.shared[(DRV, "p", "nic")] == {"bw": 5}
    book.release("ns/b")
    assert book.shared[(DRV, "p", "nic")] == {"bw": 3}
    book.release("ns/c")
    assert (DRV, "p", "nic") not in book.shared


def test_release_notifies_listeners_and_bumps_versions():
    book = AllocationBook()
    seen = []
    book.release_listeners.append(seen.append)
    book.commit("ns/a", _alloc({"device": "d0"}))
    v = book.pool_version[(DRV, "p")]
    book.release("ns/a")
    assert seen == [{(DRV, "p")}]
    assert book.pool_version[(DRV, "p")] == v + 1
