"""A long search's early answers (``allocation/engine/v1/matching.py`` and the search's
checkpoint, docs/v1.md "A search that cannot succeed" and "The Filter timeout")."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from allocation.engine.v1 import CANNOT_ALLOCATE, TIMED_OUT, AllocationError, Allocator
from allocation.engine.v1 import search as search_module
from tests.allocation.engine.v1.builders import (
    DRIVER,
    allocator,
    claim,
    device,
    first_available,
    node,
    picked,
    request,
    slice_,
)
from tests.allocation.engine.v1.random_clusters import clusters, schedule


def _devices(n: int, **attrs) -> list[dict]:
    return [device(f"dev-{i}", **attrs) for i in range(n)]


def _pair(name: str, first: int, second: int) -> dict:
    return claim(name, request("r0", "gpu", first), request("r1", "gpu", second))


@pytest.mark.parametrize("release", ["1.34", "1.35", "1.36"])
def test_a_node_short_of_devices_is_answered_at_the_check(release):
    # three claims of 2 + 2 devices on 11: alone, the search tries 6.5 million steps in
    # 1.36 (combinations of picks) and far more in 1.34 and 1.35 (every order of them)
    a = allocator([slice_("s1", _devices(11))], release=release)
    out = a.allocate(node(), [_pair(f"c{i}", 2, 2) for i in range(3)])
    assert out.reason == CANNOT_ALLOCATE
    assert out.invocations == search_module.CHECK_AT


def test_without_the_check_the_same_search_runs_on(monkeypatch):
    monkeypatch.setattr(search_module, "CHECK_AT", 10**9)
    a = allocator([slice_("s1", _devices(6))], release="1.35")
    out = a.allocate(node(), [_pair("c0", 2, 2), _pair("c1", 1, 2)])
    assert out.reason == CANNOT_ALLOCATE
    monkeypatch.setattr(search_module, "CHECK_AT", 1)
    checked = a.allocate(node(), [_pair("c0", 2, 2), _pair("c1", 1, 2)])
    assert checked.reason == CANNOT_ALLOCATE
    assert checked.invocations == 1 < out.invocations


def test_a_fit_is_not_refused_by_the_check(monkeypatch):
    monkeypatch.setattr(search_module, "CHECK_AT", 1)
    a = allocator([slice_("s1", _devices(4))])
    out = a.allocate(node(), [_pair("c0", 1, 1), _pair("c1", 1, 1)])
    assert picked(out) == [[("r0", "dev-0"), ("r1", "dev-1")], [("r0", "dev-2"), ("r1", "dev-3")]]


def test_the_check_moves_devices_between_requests(monkeypatch):
    # r0 may take any device, r1 only dev-0: a greedy count would refuse, the matching not
    monkeypatch.setattr(search_module, "CHECK_AT", 1)
    a = allocator([slice_("s1", [device("dev-0", big=True), device("dev-1", big=False)])])
    c = claim("c0", request("r0", "gpu", 1),
              request("r1", "gpu", 1, f'device.attributes["{DRIVER}"].big'))
    assert picked(a.allocate(node(), [c])) == [[("r0", "dev-1"), ("r1", "dev-0")]]


def test_match_attribute_is_asked_per_value(monkeypatch):
    # 3 + 2 devices of one model: no model has 5, though the node has 10 devices
    monkeypatch.setattr(search_module, "CHECK_AT", 1)
    devices = [device(f"dev-{i}", model=m) for i, m in enumerate("aaaabbbccc")]
    a = allocator([slice_("s1", devices)])
    match = [{"matchAttribute": f"{DRIVER}/model", "requests": []}]
    out = a.allocate(node(), [claim("c0", request("r0", "gpu", 3), request("r1", "gpu", 2),
                                    constraints=match)])
    assert (out.reason, out.invocations) == (CANNOT_ALLOCATE, 1)
    fits = a.allocate(node(), [claim("c0", request("r0", "gpu", 2), request("r1", "gpu", 2),
                                     constraints=match)])
    assert [d for _, d in picked(fits)[0]] == ["dev-0", "dev-1", "dev-2", "dev-3"]


def test_a_selector_error_on_a_device_keeps_the_search_going(monkeypatch):
    # dev-5 lacks the attribute: the request selector fails on it, so the search must go on
    # to meet that fatal error rather than be answered "does not fit"
    monkeypatch.setattr(search_module, "CHECK_AT", 1)
    devices = [device(f"dev-{i}", ok=True) for i in range(5)] + [device("dev-5")]
    a = allocator([slice_("s1", devices)])
    c = claim("c0", request("r0", "gpu", 6, f'device.attributes["{DRIVER}"].ok'))
    with pytest.raises(AllocationError, match="no such key"):
        a.allocate(node(), [c])


def test_requests_the_check_cannot_read_are_left_to_the_search(monkeypatch):
    # an All request may end in a fatal error; firstAvailable and admin access ask nothing
    monkeypatch.setattr(search_module, "CHECK_AT", 1)
    a = allocator([slice_("s1", _devices(3))])
    c = claim("c0", first_available("r0", request("a", "gpu", 4), request("b", "gpu", 3)))
    assert picked(a.allocate(node(), [c])) == [[("r0/b", f"dev-{i}") for i in range(3)]]
    c = claim("c0", request("r0", "gpu", mode="All"), request("r1", "gpu", 1))
    out = a.allocate(node(), [c])
    assert out.reason == CANNOT_ALLOCATE and out.invocations > 1


def _constrained_search(release: str, gates: str = "") -> Allocator:
    # two claims of 3 devices of one model each, on 4 of model m0 and 2 of each other:
    # each claim alone fits (the check cannot refuse), both do not; the search finds that
    # out in 713 steps under 1.35
    models = ["m0"] * 4 + [f"m{1 + i // 2}" for i in range(12)]
    devices = [device(f"dev-{i:02}", model=m) for i, m in enumerate(models)]
    return allocator([slice_("s1", devices)], release=release, gates=gates)


def _spread_claims() -> list[dict]:
    match = [{"matchAttribute": f"{DRIVER}/model", "requests": []}]
    return [claim(f"c{i}", request("r0", "gpu", 3), constraints=match) for i in range(2)]


def test_the_filter_timeout_ends_a_search_that_runs_too_long(monkeypatch):
    monkeypatch.setattr(search_module, "CHECK_AT", 10)
    monkeypatch.setattr(search_module, "TIMEOUT_STEPS", 500)
    out = _constrained_search("1.35").allocate(node(), _spread_claims())
    assert (out.reason, out.invocations) == (TIMED_OUT, 500)


def test_without_the_filter_timeout_gate_the_search_runs_to_its_end(monkeypatch):
    monkeypatch.setattr(search_module, "CHECK_AT", 10)
    monkeypatch.setattr(search_module, "TIMEOUT_STEPS", 500)
    out = _constrained_search("1.35", "DRASchedulerFilterTimeout=false").allocate(
        node(), _spread_claims())
    assert (out.reason, out.invocations) == (CANNOT_ALLOCATE, 713)


SETTINGS = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.data_too_large])


def _outcomes(cluster, check_at: int) -> list:
    """Every node's outcome when the check comes after ``check_at`` steps."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(search_module, "CHECK_AT", check_at)
        alloc = Allocator(cluster.profile, slices=cluster.slices, classes=cluster.classes)
        seen: list = []

        def on_attempt(node, claims, outcome, committed):
            seen.append(str(outcome) if isinstance(outcome, Exception)
                        else (outcome.reason, outcome.allocations))

        trace = schedule(alloc, cluster.nodes, cluster.pods, on_attempt)
        return [seen, trace.placements, trace.allocations]


@pytest.mark.parametrize("release, gates", [("1.34", ""), ("1.35", "AllAlpha=true"),
                                            ("1.36", ""), ("1.36", "AllAlpha=true")])
def test_checking_at_the_first_step_changes_no_outcome(release, gates):
    @SETTINGS
    @given(clusters(release, gates))
    def run(cluster):
        assert _outcomes(cluster, 1) == _outcomes(cluster, 10**9)

    run()
