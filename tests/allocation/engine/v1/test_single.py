"""The search's shortcut for one claim with one plain request (``v1/single.py``): it answers
exactly as the search does without it (allocations, reasons, invocation counts, errors), and
it leaves to the search what it cannot decide."""

from __future__ import annotations

import copy
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allocation.engine.v1 import AllocationError, Allocator
from allocation.engine.v1 import allocator as allocator_module
from allocation.engine.v1 import search as search_module
from allocation.engine.v1.search import Search
from allocation.engine.v1.single import first_free, invocations
from tests.allocation.engine.v1.builders import (
    DRIVER,
    allocator,
    claim,
    device,
    node,
    picked,
    request,
    slice_,
)
from tests.allocation.engine.v1.random_clusters import Cluster, schedule
from tests.allocation.engine.v1.random_clusters import clusters as v1_clusters

PROFILES = st.sampled_from(
    [("1.36", ""), ("1.35", ""), ("1.35", "AllAlpha=true"), ("1.34", ""), ("1.34", "AllAlpha=true")]
)


@contextmanager
def _without_shortcut(monkeypatch):
    with monkeypatch.context() as patch:
        # the search's own use, and the planned attempt's (``Attempt._first_free``)
        for module in (search_module, allocator_module):
            patch.setattr(module, "first_free", lambda *args: None)
        yield


def _first_free(search: Search) -> list | None:
    """``first_free`` of a planned search's one claim on its node."""
    return first_free(search.alloc, search.pools, search.claims[0], search.plan.single)


def _alone(claim_doc: dict) -> dict:
    """Another claim of the same spec (a pod of its own)."""
    meta = claim_doc["metadata"]
    name = f"{meta['name']}-alone"
    return {**claim_doc, "metadata": {**meta, "name": name, "uid": f"uid-{name}"}}


def _run(cluster: Cluster, pods: list[list[dict]], attempts: bool = False) -> list:
    """Every node tried for every pod, and what it gave: allocations and reason, the
    invocation count, or the fatal error's text."""
    seen = []

    def record(node_doc, claims, outcome, committed):
        name = node_doc["metadata"]["name"]
        if isinstance(outcome, AllocationError):
            seen.append((name, type(outcome).__name__, str(outcome)))
        else:
            seen.append((name, outcome.allocations, outcome.reason, outcome.invocations))

    alloc = Allocator(cluster.profile, slices=cluster.slices, classes=cluster.classes)
    trace = schedule(alloc, cluster.nodes, copy.deepcopy(pods), record, attempts)
    return [seen, trace.placements, trace.allocations]


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_the_shortcut_answers_as_the_search_on_random_clusters(data):
    """Every profile; each claim of the cluster also as a pod of its own (one claim: the
    shortcut's case), after the cluster's own pods have filled some devices."""
    release, gates = data.draw(PROFILES)
    cluster = data.draw(v1_clusters(release, gates))
    pods = [*cluster.pods, *([_alone(c)] for pod in cluster.pods for c in pod)]
    with pytest.MonkeyPatch.context() as monkeypatch, _without_shortcut(monkeypatch):
        expected = _run(cluster, pods)
    assert _run(cluster, pods) == expected
    # a scheduler's attempt per pod: from its second node on, the plan its first one made
    assert _run(cluster, pods, attempts=True) == expected


def _planned(a: Allocator, claims: list[dict]) -> Search:
    """A search of ``claims`` on node-1 under the plan a first call made (``Attempt``)."""
    first = Search(a, node(), claims)
    first.run()
    return Search(a, node(), claims, first.plan)


def test_the_first_free_devices_in_scan_order(monkeypatch):
    devices = [device(f"dev-{i}", model="a" if i % 2 else "b") for i in range(6)]
    a = allocator([slice_("s1", devices)])
    c = claim("c0", request("req", "gpu", 2, f'device.attributes["{DRIVER}"].model == "a"'))
    search = _planned(a, [c])
    picks = _first_free(search)  # decided by the shortcut
    assert invocations(picks) == 5  # two slots, the request, the claim, the end
    assert [(p.request_name, p.device.name) for p in picks] == [
        ("req", "dev-1"),
        ("req", "dev-3"),
    ]
    out = a.allocate(node(), [c])
    with _without_shortcut(monkeypatch):
        assert a.allocate(node(), [c]) == out
    assert picked(out) == [[("req", "dev-1"), ("req", "dev-3")]]
    assert out.invocations == 5  # two slots, the request, the claim, the end


def _counters() -> list[dict]:
    part = {"consumesCounters": [{"counterSet": "set", "counters": {"mem": {"value": "4"}}}]}
    return [
        slice_(
            "counters",
            [],
            sharedCounters=[{"name": "set", "counters": {"mem": {"value": "8"}}}],
            count=2,
            pool="node-1",
        ),
        slice_("devices", [{"name": "dev-0", **part}, {"name": "dev-1", **part}], count=2),
    ]


@pytest.mark.parametrize("why", ["too few", "multi", "counters"])
def test_what_the_shortcut_leaves_to_the_search(why, monkeypatch):
    slices, count = [slice_("s1", [device("dev-0"), device("dev-1")])], 2
    if why == "too few":
        count = 3
    if why == "multi":
        slices[0]["spec"]["devices"][0]["allowMultipleAllocations"] = True
    if why == "counters":
        slices = _counters()
    a = allocator(slices)
    c = claim("c0", request(count=count))
    search = _planned(a, [c])
    assert search.plan.single is not None
    assert _first_free(search) is None
    out = a.allocate(node(), [c])
    assert out.fits == (why != "too few")
    with _without_shortcut(monkeypatch):
        assert a.allocate(node(), [c]) == out


def test_only_one_claim_of_one_plain_request_is_the_shortcuts():
    a = allocator([slice_("s1", [device(f"dev-{i}", numa=0) for i in range(4)])])
    single = [claim("c0")]
    assert _planned(a, single).plan.single is not None
    others = [
        [claim("c0"), claim("c1")],
        [claim("c0", request("r0"), request("r1"))],
        [claim("c0", request(adminAccess=True))],
        [claim("c0", request(mode="All"))],
        [claim("c0", constraints=[{"matchAttribute": f"{DRIVER}/numa"}])],
    ]
    for claims in others:
        first = Search(a, node(), claims)
        first.run()
        assert first.plan.single is None, claims


@pytest.mark.parametrize("tolerated", [False, True])
def test_the_shortcut_skips_an_untolerated_taint_as_the_search(tolerated, monkeypatch):
    tainted = {**device("dev-0"), "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}
    a = allocator([slice_("s1", [tainted, device("dev-1")])])
    tolerations = [{"key": "k", "operator": "Exists"}] if tolerated else []
    c = claim("c0", request(tolerations=tolerations) if tolerated else request())
    search = _planned(a, [c])
    picks = _first_free(search)
    assert invocations(picks) == 4
    want = "dev-0" if tolerated else "dev-1"
    assert [p.device.name for p in picks] == [want]
    out = a.allocate(node(), [c])
    with _without_shortcut(monkeypatch):
        assert a.allocate(node(), [c]) == out
    assert picked(out) == [[("req", want)]]
