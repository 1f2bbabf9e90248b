"""``SliceIndex.updated``: the index of changed slices answers as one made afresh, whatever
it kept of the old one (docs/v1.md, "Speed")."""

from __future__ import annotations

import pytest

from allocation.engine.v1 import make_profile
from allocation.engine.v1.pools import Pool, SliceIndex
from tests.allocation.engine.v1.builders import device, node, slice_

NODES = [node("node-1", zone="a"), node("node-2", zone="a"), node("node-3", zone="b")]


def _shape(pools: list[Pool]) -> list[tuple]:
    """Everything a pool answers, by value (a kept pool is another object than a new one)."""
    return [
        (
            p.key,
            p.incomplete,
            p.invalid,
            p.invalid_reason,
            p.fully_visible,
            p.multi,
            p.device_count,
            p.counter_sets,
            [(v.name, v.per_device, v.node_ok, [d.key for d in v.devices]) for v in p.slices],
            [(v.name, [d.key for d in v.devices]) for v in p.other_slices],
        )
        for p in pools
    ]


def _answers(index: SliceIndex) -> list[list[tuple]]:
    return [_shape(index.pools_for(n)) for n in NODES]


def _cluster() -> list[dict]:
    return [
        slice_("s1", [device("gpu-0"), device("gpu-1")], node="node-1"),
        slice_("s2", [device("gpu-0")], node="node-2"),
        slice_("s3", [device("gpu-0")], node="node-3"),
        # one pool over two nodes: each node's completeness reads the other's slice
        slice_("w1", [device("nic-0")], node="node-1", pool="wide", count=2),
        slice_("w2", [device("nic-1")], node="node-2", pool="wide", count=2),
        slice_("all", [device("fpga-0")], node=None, pool="shared", allNodes=True),
    ]


def _changed(slices: list[dict], name: str, **spec) -> list[dict]:
    """``slices`` with the slice called ``name`` replaced by another dict (spec updated)."""
    out = []
    for s in slices:
        if s["metadata"]["name"] == name:
            s = {**s, "spec": {**s["spec"], **spec}}
        out.append(s)
    return out


CHANGES = {
    "a node's slice updated": lambda s: _changed(s, "s1", devices=[device("gpu-9")]),
    "a node's slice deleted": lambda s: [x for x in s if x["metadata"]["name"] != "s2"],
    "a slice added": lambda s: [*s, slice_("s4", [device("gpu-5")], node="node-3", pool="extra")],
    "a wide pool's slice on a newer generation": lambda s: _changed(
        s, "w2", pool={"name": "wide", "generation": 2, "resourceSliceCount": 2}
    ),
    "a wide pool's slice deleted": lambda s: [x for x in s if x["metadata"]["name"] != "w1"],
    "a shared slice updated": lambda s: _changed(s, "all", devices=[device("fpga-7")]),
    "a node selector slice added": lambda s: [
        *s,
        slice_(
            "sel",
            [device("x-0")],
            node=None,
            pool="sel",
            nodeSelector={
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}
                ]
            },
        ),
    ],
    "nothing": lambda s: list(s),
}


@pytest.mark.parametrize("release", ["1.34", "1.36"])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_an_updated_index_answers_as_a_fresh_one(change, release):
    profile = make_profile(release)
    before = _cluster()
    old = SliceIndex(before, profile)
    old_answers = _answers(old)  # every node's pools cached in the old index
    after = CHANGES[change](before)
    updated = old.updated(after)
    assert _answers(updated) == _answers(SliceIndex(after, profile))
    assert _answers(old) == old_answers  # the old index is left as it was (forks use it)


def test_an_unchanged_slice_keeps_its_devices_and_an_untouched_node_its_pools():
    profile = make_profile()
    before = _cluster()
    old = SliceIndex(before, profile)
    kept = old.pools_for(NODES[2])
    s2 = before[1]
    parsed = old.devices(s2)
    updated = old.updated(_changed(before, "s1", devices=[device("gpu-9")]))
    assert updated.pools_for(NODES[2]) is kept  # node-3 reads nothing that changed
    assert updated.pools_for(NODES[0]) is not old.pools_for(NODES[0])
    assert updated.devices(s2) is parsed


@pytest.mark.parametrize("release", ["1.34", "1.35", "1.36"])
def test_a_pools_slice_count_is_read_from_its_first_slice_by_name(release):
    # two slices of one generation that disagree on resourceSliceCount (a driver's error):
    # upstream reads the count of the pool's first slice, which the planner takes by name,
    # whatever the slices' order in the input
    a = slice_("a", [device("gpu-0")], pool="p", count=2)
    b = slice_("b", [device("gpu-1")], pool="p", count=3)
    for order in ([a, b], [b, a]):
        index = SliceIndex(order, make_profile(release))
        assert [p.incomplete for p in index.pools_for(NODES[0])] == [False]
    index = SliceIndex([slice_("a", [device("gpu-0")], pool="p", count=3),
                        slice_("b", [device("gpu-1")], pool="p", count=2)],
                       make_profile(release))
    assert [p.incomplete for p in index.pools_for(NODES[0])] == [True]


@pytest.mark.parametrize(("release", "gates", "incomplete"), [
    ("1.36", "", True),
    ("1.36", "DRAConsumableCapacity=true,DRADeviceBindingConditions=true", True),
    ("1.36", "DRAConsumableCapacity=false,DRADeviceBindingConditions=false", False),
    ("1.35", "DRAPartitionableDevices=true", False),
    ("1.35", "DRAPartitionableDevices=true,DRAConsumableCapacity=true", False)])
def test_136_reads_the_slice_count_of_the_nodes_own_slice_first(release, gates, incomplete):
    # 1.36's incubating and experimental NewAllocator gather a node's own slices before
    # the shared ones, so the count of b-node-1 (3) counts, not that of a-counters (2),
    # though a-counters comes first by name; 1.36's stable variant and 1.35 read by name
    # (found by the differential harness against v0.36.2, docs/v1.md "Pool order")
    counters = slice_("a-counters", [], node=None, pool="shared", count=2,
                      sharedCounters=[{"name": "big", "counters": {"mem": {"value": "80Gi"}}}])
    own = slice_("b-node-1", [{"name": "d0", "consumesCounters": [
        {"counterSet": "big", "counters": {"mem": {"value": "10Gi"}}}]}], pool="shared",
        count=3)
    index = SliceIndex([counters, own], make_profile(release, gates))
    assert [p.incomplete for p in index.pools_for(NODES[0])] == [incomplete]
