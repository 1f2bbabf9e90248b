"""``objects/planner.py``: the v1 slices a node group's new node publishes."""

from __future__ import annotations

from allocation.engine.objects.planner import is_v1_slice_spec, v1_node_slices


def test_each_new_node_gets_its_own_pools_counts_and_sortable_names():
    specs = [{"driver": "d.example.com", "devices": [{"name": f"x-{i}"}]} for i in range(11)]
    specs.append({"driver": "e.example.com", "pool": {"name": "src-1", "generation": 3}})
    specs.append({"driver": "e.example.com", "pool": {"name": "fabric"}, "nodeName": "src-1"})
    docs = v1_node_slices(specs, "new-4", source="src-1")
    names = [d["metadata"]["name"] for d in docs]
    assert names[:2] == ["new-4-d.example.com-00", "new-4-d.example.com-01"]
    assert names[-3:] == ["new-4-d.example.com-10", "new-4-e.example.com-0",
                          "new-4-e.example.com-1"]
    assert names == sorted(names)
    assert [d["spec"]["pool"] for d in docs[-3:]] == [
        {"name": "new-4", "generation": 0, "resourceSliceCount": 11},
        {"name": "new-4", "generation": 3, "resourceSliceCount": 1},
        {"name": "new-4/fabric", "generation": 0, "resourceSliceCount": 1}]
    assert {d["spec"]["nodeName"] for d in docs} == {"new-4"}
    assert "pool" not in specs[0] and specs[-1]["nodeName"] == "src-1"  # not changed


def test_v1_entries_are_told_apart_by_the_driver_field():
    assert is_v1_slice_spec({"driver": "d"})
    assert not is_v1_slice_spec({"driverName": "d"})
    assert not is_v1_slice_spec({"driver": "d", "driverName": "d"})
    assert not is_v1_slice_spec(["driver"])
