"""allocation.presenters.v1_devices: a node's v1 pools, slices and classes as the pages show
them, on a simulated v1 cluster (tests/v1_cluster.py)."""

from __future__ import annotations

from allocation.engine.manifests import load_texts
from allocation.engine.simulation import simulate
from allocation.presenters import v1_devices
from tests import factories as f
from tests import v1_cluster as v1


def _state(docs=None):
    return simulate(load_texts([("v1.yaml", f.to_yaml(docs or v1.cluster()))])).state


def test_the_node_sees_its_pool_with_devices_counters_and_capacity_in_use():
    [pool] = v1_devices.node_pools(_state(), "n1")
    assert (pool.driver, pool.name, pool.problem, pool.node_local) == (
        v1.DRIVER, "n1", "", True)
    assert [s for s, _url in pool.slices] == ["n1-counters", "n1-gpus"]
    devices = {d.name: d for d in pool.devices}
    assert [(d.name, d.state) for d in pool.devices] == [
        ("gpu-0-a", "allocated"), ("gpu-0-b", "free"), ("nic-0", "shared")]
    half = devices["gpu-0-a"]
    assert half.attributes == [("model", "a100")]
    assert half.capacity == [v1_devices.CapacityView("memory", "40Gi")]
    assert half.consumes == ["gpu-0-counters: memory 40Gi"]
    assert [(h.claim, h.request, h.share_id) for h in half.holders] == [
        ("default/c1", "gpu", None)]
    [bandwidth] = devices["nic-0"].capacity
    assert (bandwidth.value, bandwidth.used, bandwidth.percent) == ("10G", "2G", 20)
    [bar] = pool.counters
    assert (bar.counter_set, bar.counter, bar.used, bar.total, bar.percent) == (
        "gpu-0-counters", "memory", "40Gi", "80Gi", 50)
    assert bar.holders == (("default/c1", "/claims/default/c1/"),)


def test_a_network_attached_pool_is_visible_on_the_nodes_it_selects():
    shared = v1.resource_slices()[0]
    shared["metadata"]["name"] = "rack-1"
    spec = shared["spec"]
    del spec["nodeName"]
    spec["nodeSelector"] = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "rack", "operator": "In", "values": ["r1"]}]}]}
    spec["pool"] = {"name": "rack-1", "resourceSliceCount": 1}
    spec["devices"] = [{"name": "fpga-0"}]
    docs = [f.node("n1", labels={"rack": "r1"}), f.node("n2"), v1.device_class(), shared]
    state = _state(docs)
    [pool] = v1_devices.node_pools(state, "n1")
    assert (pool.name, pool.node_local, [d.name for d in pool.devices]) == (
        "rack-1", False, ["fpga-0"])
    assert v1_devices.node_pools(state, "n2") == []
    assert v1_devices.node_pools(state, "nope") == []


def test_an_incomplete_pool_says_so():
    docs = [d for d in v1.cluster() if d["metadata"]["name"] != "n1-counters"]
    [pool] = v1_devices.node_pools(_state(docs), "n1")
    assert pool.problem.startswith("incomplete")


def test_device_classes_and_slices():
    state = _state()
    rows = v1_devices.device_class_list(state)
    assert [(r.name, r.claims, r.url) for r in rows] == [
        ("gpu", 1, "/deviceclasses/gpu/"), ("nic", 1, "/deviceclasses/nic/")]
    view = v1_devices.device_class_view(state, "nic")
    assert view.claims == [("default/net", "/claims/default/net/")]
    assert view.extended_resource_names == ["deviceclass.resource.kubernetes.io/nic"]
    assert v1_devices.device_class_view(state, "nope") is None
    assert [(r.name, r.where, r.devices, r.counter_sets) for r in
            v1_devices.slice_list(state)] == [("n1-counters", "node-local", 0, 1),
                                             ("n1-gpus", "node-local", 3, 0)]
    piece = v1_devices.slice_view(state, "n1-gpus")
    assert (piece.generation, piece.slice_count, len(piece.devices)) == (1, 2, 3)
    assert v1_devices.slice_view(state, "n1-counters").counters == [
        ("gpu-0-counters", "memory 80Gi")]
    assert v1_devices.slice_view(state, "nope") is None


def test_config_text():
    entry = {"source": "FromClass", "requests": ["gpu"],
             "opaque": {"driver": v1.DRIVER, "parameters": {"b": 1, "a": "x"}}}
    assert v1_devices.config_text(entry) == (
        'FromClass gpu.example.com for gpu: {"a": "x", "b": 1}')


def test_the_counters_of_a_pool_count_its_devices_on_other_nodes_too():
    def dev(name, node):
        return {"name": name, "nodeName": node, "consumesCounters": [
            {"counterSet": "s", "counters": {"c": {"value": "1"}}}]}

    pool = {"name": "shared", "resourceSliceCount": 2}
    devices = {"apiVersion": v1.V1, "kind": "ResourceSlice", "metadata": {"name": "per-device"},
               "spec": {"driver": v1.DRIVER, "pool": pool, "perDeviceNodeSelection": True,
                        "devices": [dev("d-a", "n1"), dev("d-b", "n2")]}}
    counters = {"apiVersion": v1.V1, "kind": "ResourceSlice", "metadata": {"name": "counters"},
                "spec": {"driver": v1.DRIVER, "pool": pool,
                         "sharedCounters": [{"name": "s", "counters": {"c": {"value": "2"}}}]}}
    held = v1.claim("held")
    held["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": v1.DRIVER, "pool": "shared", "device": "d-b"}]}}}
    state = _state([f.node("n1"), f.node("n2"), v1.device_class(), devices, counters, held])
    [pool_view] = v1_devices.node_pools(state, "n1")
    assert [d.name for d in pool_view.devices] == ["d-a"]  # only the node's own device
    [bar] = pool_view.counters
    assert (bar.used, bar.total, bar.holders) == ("1", "2", (("default/held",
                                                              "/claims/default/held/"),))


def test_another_nodes_pool_is_not_listed_though_its_counter_slice_is_gathered():
    # The allocator gathers every counter slice on every node; n2's pool has no device on
    # n1, so n1's page does not list it (as "network-attached", with n2's counters).
    docs = [f.node("n1"), f.node("n2"), v1.device_class(), *v1.resource_slices("n1"),
            *v1.resource_slices("n2")]
    state = _state(docs)
    assert [(p.name, p.node_local) for p in v1_devices.node_pools(state, "n1")] == [
        ("n1", True)]
    assert [p.name for p in v1_devices.nodes_pools(state, ["n1", "n2"])["n2"]] == ["n2"]


def test_holders_of_some_pools_are_those_of_every_pool_for_those_pools():
    state = _state()
    every = v1_devices.holders_by_device(state)
    assert every  # the cluster's claims hold devices
    pool = next(iter(every))[:2]
    some = v1_devices.holders_by_device(state, {pool})
    assert some == {key: holders for key, holders in every.items() if key[:2] == pool}
    assert v1_devices.holders_by_device(state, set()) == {}


def test_attribute_values_read_as_kubectl_writes_them_lists_in_brackets():
    text = v1_devices._attribute_text
    assert [text({"string": "a100"}), text({"int": 4}), text({"bool": True}),
            text({"version": "1.2.3"})] == ["a100", "4", "true", "1.2.3"]
    assert text({"ints": [0, 1]}) == "[0, 1]"
    assert text({"bools": [True, False]}) == "[true, false]"
    assert text({"strings": ["a", "b"]}) == "[a, b]"
