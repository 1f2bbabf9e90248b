"""The long-lived Allocator: first_fit over ordered nodes, attempts, caches, allocated claims."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine.v1 import UnschedulableError, allocated_claim_fits, dra_score
from tests.allocation.engine.v1.builders import (
    allocator,
    claim,
    device,
    device_class,
    first_available,
    node,
    request,
    slice_,
)

NODES = [node(f"node-{i}") for i in range(4)]


def _cluster():
    return allocator([slice_(f"s{i}", [device("d0"), device("d1")], node=f"node-{i}")
                      for i in range(4)])


def test_first_fit_equals_allocate_in_node_order():
    fast, slow = _cluster(), _cluster()
    for i in range(9):
        c = claim(f"c{i}", request(count=1 + i % 2))
        got = fast.first_fit(NODES, [c])
        want = next(((n, o) for n in NODES if (o := slow.allocate(n, [c])).fits), None)
        assert (got is None) == (want is None)
        if got is None:
            continue
        assert got[0] is want[0] and got[1].allocations == want[1].allocations
        fast.commit(c, got[1].allocations[0])
        slow.commit(c, want[1].allocations[0])
        if i == 5:
            fast.release(claim("c0"))
            slow.release(claim("c0"))


def test_first_fit_still_raises_node_independent_errors():
    a = _cluster()
    for i in range(4):
        found = a.first_fit(NODES, [claim(f"x{i}", request(count=2))])
        a.commit(claim(f"x{i}"), found[1].allocations[0])
    assert a.first_fit(NODES, [claim("c")]) is None
    with pytest.raises(UnschedulableError):
        a.first_fit(NODES, [claim("c", request(cls="missing"))])


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.booleans(), st.integers(0, 20),
                          st.permutations(range(4))), max_size=25))
def test_attempt_equals_allocate_on_every_node(steps):
    fast, slow = _cluster(), _cluster()
    placed: list[str] = []
    for i, (count, release, victim, order) in enumerate(steps):
        if release and placed:
            name = placed.pop(victim % len(placed))
            fast.release(claim(name))
            slow.release(claim(name))
            continue
        c = claim(f"c{i}", request(count=min(count, 2), adminAccess=count == 3))
        attempt = fast.attempt([c])
        outcomes = []
        for n in order:
            known = attempt.known(NODES[n]["metadata"]["name"])
            outcomes.append((attempt.allocate(NODES[n]), slow.allocate(NODES[n], [c]), known))
        for got, want, known in outcomes:
            assert (got.allocations, got.reason) == (want.allocations, want.reason)
            assert known is None or known == want.reason
        fitting = next((got for got, _, _ in outcomes if got.fits), None)
        if fitting is not None:
            fast.commit(c, fitting.allocations[0])
            slow.commit(c, fitting.allocations[0])
            placed.append(f"c{i}")


def test_attempt_raises_preflight_errors_and_fits_no_claims_everywhere():
    a = _cluster()
    for i in range(4):
        found = a.first_fit(NODES, [claim(f"x{i}", request(count=2))])
        a.commit(claim(f"x{i}"), found[1].allocations[0])
    attempt = a.attempt([claim("c")])
    assert [attempt.allocate(n).reason for n in NODES] == ["cannot allocate all claims"] * 4
    with pytest.raises(UnschedulableError):
        a.attempt([claim("c", request(cls="missing"))]).allocate(NODES[3])
    empty = a.attempt([])
    assert all(empty.allocate(n).fits for n in NODES)


def test_a_claim_without_requests_fits_on_nodes_known_to_be_full():
    # upstream allocates such a claim (no results) on any node: a full node is no reason
    a = _cluster()
    for i in range(4):
        found = a.first_fit(NODES, [claim(f"x{i}", request(count=2))])
        a.commit(claim(f"x{i}"), found[1].allocations[0])
    assert not a.first_fit(NODES, [claim("probe")])  # every node is now known to be full
    nothing = claim("nothing")
    nothing["spec"]["devices"]["requests"] = []
    attempt = a.attempt([nothing])
    assert [attempt.known(n["metadata"]["name"]) for n in NODES] == [None] * 4
    assert all(attempt.allocate(n).fits for n in NODES)
    assert a.first_fit(NODES, [nothing])[0] is NODES[0]


def test_a_node_whose_labels_change_sees_the_pools_of_its_new_labels():
    selector = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "gpu", "operator": "In", "values": ["yes"]}]}]}
    a = allocator([slice_("s", [device("d0")], node=None, pool="p", nodeSelector=selector)])
    labelled = node("node-1", gpu="yes")
    assert a.allocate(labelled, [claim("c")]).fits
    assert not a.allocate(node("node-1"), [claim("c")]).fits
    labelled["metadata"]["labels"]["gpu"] = "no"  # changed in place
    assert not a.allocate(labelled, [claim("c")]).fits
    assert a.allocate(node("node-1", gpu="yes"), [claim("c")]).fits


def test_set_slices_drops_cached_pools():
    a = allocator([slice_("s", [device("d0")])])
    assert a.allocate(node(), [claim("c")]).fits
    a.set_slices([])
    assert not a.allocate(node(), [claim("c")]).fits


def test_allocated_claim_node_selector():
    c = claim("c")
    assert allocated_claim_fits(c, node())
    c["status"] = {"allocation": {"nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}}}
    assert allocated_claim_fits(c, node("node-1"))
    assert not allocated_claim_fits(c, node("node-2"))


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.booleans(), st.integers(0, 20)),
                max_size=25))
def test_first_fit_equals_the_plain_node_loop(steps):
    fast, slow = _cluster(), _cluster()
    placed: list[str] = []
    for i, (count, release, victim) in enumerate(steps):
        if release and placed:
            name = placed.pop(victim % len(placed))
            fast.release(claim(name))
            slow.release(claim(name))
            continue
        c = claim(f"c{i}", request(count=min(count, 2), adminAccess=count == 3))
        got = fast.first_fit(NODES, [c])
        want = next(((n, o) for n in NODES if (o := slow.allocate(n, [c])).fits), None)
        assert (got is None) == (want is None)
        if got is not None:
            assert got[0] is want[0] and got[1].allocations == want[1].allocations
            fast.commit(c, got[1].allocations[0])
            slow.commit(c, want[1].allocations[0])
            placed.append(f"c{i}")


def test_dra_score_counts_chosen_subrequest_positions():
    a = allocator([slice_("s", [device("d0"), device("d1")])])
    c = claim("c", first_available("r", request("big", count=3), request("one")),
              first_available("q", request("one")), request("plain"))
    out = a.allocate(node(), [c])
    assert not out.fits
    c = claim("c", first_available("r", request("big", count=3), request("one")),
              first_available("q", request("one")))
    out = a.allocate(node(), [c])
    assert dra_score([c], out.allocations) == (8 - 1) + (8 - 0)


def test_allocations_of_vanished_devices_do_not_make_a_node_look_full():
    a = allocator([slice_("s", [device("d0")])])
    a.book.commit("default/old", {"devices": {"results": [
        {"request": "r", "driver": "gpu.example.com", "pool": "node-1", "device": "gone"}]}})
    assert a.first_fit([node()], [claim("c")]) is not None


def _of_spec(name: str, spec: dict) -> dict:
    """Another claim of the very ``spec`` object (claims of one template share it)."""
    return {**claim(name), "spec": spec}


def test_attempts_of_one_spec_reuse_the_plan_and_answer_as_allocate():
    fast, slow = _cluster(), _cluster()
    spec = claim("t", request(count=2))["spec"]
    plans = []
    for i in range(5):
        c = _of_spec(f"c{i}", spec)
        if i == 3:  # a class edited: the plans made under the old classes are not reused
            for a in (fast, slow):
                a.set_classes([device_class("gpu", 'device.driver == "other.example.com"')])
        attempt = fast.attempt([c])
        got = [attempt.allocate(n) for n in NODES]
        want = [slow.allocate(n, [c]) for n in NODES]
        assert [(o.allocations, o.reason) for o in got] == [
            (o.allocations, o.reason) for o in want]
        plans.append(fast.plans.get((id(spec),)))
        fitting = next((o for o in got if o.fits), None)
        if fitting is not None:
            fast.commit(c, fitting.allocations[0])
            slow.commit(c, fitting.allocations[0])
    assert plans[0] is not None and plans[1] is plans[0] and plans[2] is plans[0]
    assert plans[3] is not None and plans[3] is not plans[0] and plans[4] is plans[3]


def test_a_plan_serves_only_claims_of_its_very_spec_objects():
    a = _cluster()
    spec = claim("t", request(count=2))["spec"]
    a.attempt([_of_spec("c0", spec)]).allocate(NODES[0])
    plan = a.plans[(id(spec),)]
    assert plan.same_specs([_of_spec("c1", spec)])
    assert not plan.same_specs([claim("c2", request(count=2))])  # an equal spec, another
    assert not plan.same_specs([_of_spec("c1", spec), _of_spec("c2", spec)])
    twin = plan.fresh([_of_spec("c1", spec)])[0]
    assert (twin.key, twin.owner, twin.picks) == ("default/c1", "claim default/c1", [])
    assert twin.data is plan.claims[0].data
    other = claim("u", request(count=1))["spec"]
    a.attempt([_of_spec("c3", spec), _of_spec("c4", other)]).allocate(NODES[0])
    pair = a.plans[(id(spec), id(other))]
    assert pair.same_specs([_of_spec("c5", spec), _of_spec("c6", other)])
    assert not pair.same_specs([_of_spec("c5", other), _of_spec("c6", spec)])  # in order
    assert not pair.same_specs([_of_spec("c5", spec)])


def test_a_planned_single_claim_is_answered_without_a_search(monkeypatch):
    from allocation.engine.v1 import allocator as allocator_module

    made = []

    class Counted(allocator_module.Search):
        def __init__(self, *args, **kwargs):
            if args[0] is fast:  # not ``slow.allocate``'s
                made.append(args[1]["metadata"]["name"])
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(allocator_module, "Search", Counted)
    answers = []
    real = allocator_module.nothing_free

    def nothing_free(*args):
        answers.append(real(*args))
        return answers[-1]

    monkeypatch.setattr(allocator_module, "nothing_free", nothing_free)
    fast, slow = _cluster(), _cluster()
    spec = claim("t", request(count=2))["spec"]
    for i in range(3):  # node-0 and node-1 fill up; the third pod fits on node-2
        c = _of_spec(f"c{i}", spec)
        attempt = fast.attempt([c])
        got = [attempt.allocate(n) for n in NODES]
        want = [slow.allocate(n, [c]) for n in NODES]
        assert [(o.allocations, o.reason, o.invocations) for o in got] == [
            (o.allocations, o.reason, o.invocations) for o in want]
        fitting = next(o for o in got if o.fits)
        fast.commit(c, fitting.allocations[0])
        slow.commit(c, fitting.allocations[0])
    # one search: the first pod's first node, which made the plan; after it the plan's
    # first free devices, and a full node's answer, without one
    assert made == ["node-0"]
    # the nothing-free walk only where first_free found nothing: the full nodes, once
    # each (the third pod's first call knows node-0 full: its plan is the first pod's)
    assert answers == [True, True]


def test_an_attempt_left_to_the_search_scans_the_node_once_more_only():
    # too few devices: ``first_free`` cannot decide, the search runs without asking it
    # again, so the attempt examines the devices as often as ``allocate`` does
    fast, slow = _cluster(), _cluster()
    spec = claim("t", request(count=3))["spec"]
    attempt = fast.attempt([_of_spec("c0", spec)])
    for n in NODES:
        before = (fast.examined, slow.examined)
        got = attempt.allocate(n)
        want = slow.allocate(n, [_of_spec("c0", spec)])
        assert (got.allocations, got.reason, got.invocations) == (
            want.allocations, want.reason, want.invocations)
        assert fast.examined - before[0] == slow.examined - before[1] > 0


@pytest.mark.parametrize("where", ["none", "class", "claim"])
def test_a_planned_single_claims_config_is_made_as_allocate_makes_it(where):
    # the plan knows once whether its claims' allocations carry config (none: not looked
    # for per allocation); with config they carry it as allocate's do
    opaque = {"opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}
    classes = [device_class("gpu", config=[opaque] if where == "class" else None)]
    slices = [slice_(f"s{i}", [device("d0"), device("d1")], node=f"node-{i}")
              for i in range(4)]
    fast, slow = allocator(slices, classes), allocator(slices, classes)
    spec = claim("t", config=[opaque] if where == "claim" else None)["spec"]
    for i in range(3):
        c = _of_spec(f"c{i}", spec)
        attempt = fast.attempt([c])
        got = [attempt.allocate(n) for n in NODES]
        want = [slow.allocate(n, [c]) for n in NODES]
        assert [(o.allocations, o.reason) for o in got] == [
            (o.allocations, o.reason) for o in want]
        [allocation] = next(o for o in got if o.fits).allocations
        fast.commit(c, allocation)
        slow.commit(c, allocation)
        assert ("config" in allocation["devices"]) == (where != "none")
    assert fast.plans[(id(spec),)].single_config_free is (where == "none")


def test_a_cel_error_under_another_pods_plan_names_this_pods_claim():
    # the planned shortcut scans with the plan's claim (the first pod's); its CEL runtime
    # error is raised again by the search, naming the claim being allocated
    from allocation.engine.v1 import CelRuntimeError

    numa = 'device.attributes["gpu.example.com"].numa == 0'
    slices = [slice_("s0", [device("d0", numa=0)], node="node-0"),
              slice_("s1", [device("d0")], node="node-1")]
    fast, slow = allocator(slices), allocator(slices)
    spec = claim("t", request("req", "gpu", 1, numa))["spec"]
    first = _of_spec("c0", spec)
    fast.commit(first, fast.attempt([first]).allocate(NODES[0]).allocations[0])
    slow.commit(first, slow.allocate(NODES[0], [first]).allocations[0])
    second = _of_spec("c1", spec)
    attempt = fast.attempt([second])
    assert attempt.allocate(NODES[0]).reason == slow.allocate(NODES[0], [second]).reason
    with pytest.raises(CelRuntimeError) as got:
        attempt.allocate(NODES[1])
    with pytest.raises(CelRuntimeError) as want:
        slow.allocate(NODES[1], [second])
    assert (str(got.value), got.value.detail) == (str(want.value), want.value.detail)
    assert got.value.claim == "default/c1"
