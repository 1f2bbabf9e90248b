"""The incremental book of allocations."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    with pytest.raises(ValueError, match="claim ns/a is already allocated"):
        book.commit("ns/a", _alloc({"device": "d1"}))
    book.release("ns/a")
    assert book.owner((DRV, "p", "d0")) is None
    assert book.pool_dedicated[(DRV, "p")] == 0
    book.release("ns/a")  # no-op


def test_a_device_two_claims_name_stays_allocated_until_both_are_released():
    # upstream's allocated state (kube-scheduler's GatherAllocatedState, 1.34-1.36) is the
    # set of the devices of every allocated claim: input naming one device in two claims is
    # not refused, and the device is taken while any of them holds it
    book = AllocationBook()
    book.commit("ns/a", _alloc({"device": "d0"}))
    book.commit("ns/b", _alloc({"device": "d0"}, {"device": "d0"}))
    assert book.owner((DRV, "p", "d0")) == "ns/a"
    assert book.pool_dedicated[(DRV, "p")] == 1
    book.release("ns/a")
    assert book.owner((DRV, "p", "d0")) == "ns/b"
    assert book.pool_dedicated[(DRV, "p")] == 1
    book.release("ns/b")
    assert book.owner((DRV, "p", "d0")) is None
    assert book.pool_dedicated[(DRV, "p")] == 0


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


def _holdings(book: AllocationBook) -> tuple:
    return (dict(book.dedicated), {k: dict(v) for k, v in book.shared.items()},
            {k: set(v) for k, v in book.shared_owners.items() if v},
            {k: v for k, v in book.pool_dedicated.items() if v},
            {k: list(v) for k, v in book._more_holders.items()}, sorted(book._claims))


def test_a_copy_holds_the_same_and_changes_apart():
    book = AllocationBook()
    book.commit("ns/a", _alloc({"device": "d0"}))
    book.commit("ns/b", _alloc({"device": "d0"}, {"device": "d1"}))  # d0 named twice
    book.commit("ns/c", _alloc({"device": "nic", "shareID": "1",
                                "consumedCapacity": {"bw": "2"}}))
    book.commit("ns/d", _alloc({"device": "nic", "shareID": "2",
                                "consumedCapacity": {"bw": "3"}}))
    before = _holdings(book)
    copy = book.copy()
    assert _holdings(copy) == before and copy.pool_version == book.pool_version
    for ref in ("ns/a", "ns/c"):
        copy.release(ref)
    copy.commit("ns/e", _alloc({"device": "d2"}))
    assert _holdings(book) == before  # the original holds what it held
    assert copy.owner((DRV, "p", "d0")) == "ns/b" and book.owner((DRV, "p", "d0")) == "ns/a"
    assert copy.shared[(DRV, "p", "nic")] == {"bw": 3}
    assert book.shared[(DRV, "p", "nic")] == {"bw": 5}


def test_release_notifies_listeners_and_bumps_versions():
    book = AllocationBook()
    seen = []
    book.release_listeners.append(seen.append)
    book.commit("ns/a", _alloc({"device": "d0"}))
    v = book.pool_version[(DRV, "p")]
    book.release("ns/a")
    assert seen == [{(DRV, "p")}]
    assert book.pool_version[(DRV, "p")] == v + 1


_ops = st.lists(st.tuples(st.booleans(), st.integers(0, 5), st.integers(0, 3),
                          st.booleans(), st.integers(0, 3)), max_size=30)


@settings(max_examples=150, deadline=None)
@given(_ops)
def test_incremental_book_equals_a_book_rebuilt_from_the_live_claims(ops):
    book = AllocationBook()
    live: dict[str, dict] = {}
    for commit, claim, dev, shared, amount in ops:
        key = f"ns/c{claim}"
        if commit:
            result = {"device": f"d{dev}"}
            if shared:
                result.update(device=f"nic{dev}", shareID=f"s{claim}",
                              consumedCapacity={"bw": str(amount)})
            alloc = _alloc(result)
            if key in live:
                continue
            book.commit(key, alloc)
            live[key] = alloc
        else:
            book.release(key)
            live.pop(key, None)
    fresh = AllocationBook()
    for key, alloc in live.items():
        fresh.commit(key, alloc)
    assert book.dedicated == fresh.dedicated
    assert {k: v for k, v in book.shared.items()} == fresh.shared
    assert {k: v for k, v in book.pool_dedicated.items() if v} == {
        k: v for k, v in fresh.pool_dedicated.items() if v}


def test_share_id_is_ignored_with_consumable_capacity_off():
    # the scheduler's GatherAllocatedState: a shareID counts only with the gate on
    book = AllocationBook(consumable_capacity=False)
    book.commit("default/a", {"devices": {"results": [
        {"request": "r", "driver": "d", "pool": "p", "device": "x", "shareID": "s",
         "consumedCapacity": {"bw": "1"}}]}})
    assert book.dedicated == {("d", "p", "x"): "default/a"} and not book.shared
    book.release("default/a")
    assert not book.dedicated
