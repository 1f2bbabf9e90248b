"""allocation.presenters.dashboard: what the dashboard lists."""

from __future__ import annotations

from allocation.engine.objects import Pod
from allocation.presenters.dashboard import dashboard, pending_reason
from tests.allocation.presenters.docs import cluster_state
from tests.factories import pod


def test_pending_pods_carry_the_schedulers_reason() -> None:
    view = dashboard(cluster_state())

    pending = {p.name: p for p in view.pending}
    assert sorted(pending) == ["full-user", "waiting"]
    assert pending["waiting"].reason == (
        "0/2 nodes are available: 2 cannot allocate all claims.")
    assert pending["waiting"].url == "/pods/default/waiting/"
    assert view.bound_pods == 3


def test_usage_per_driver_and_model_and_per_class() -> None:
    view = dashboard(cluster_state())

    usage = {(u.driver, u.model): (u.allocated, u.free, u.unit) for u in view.usage}
    assert usage == {
        ("cards.dra.example.com", "namedResourcesWithAttributes"): (1, 1, "devices"),
        ("gpu.example.com", "partitionable"): (1, 2, "partitions"),
        ("nic.example.com", "counter"): (3, 1, "units"),
    }
    classes = {c.name: (c.mode, c.allocated, c.pending, c.held) for c in view.classes}
    assert classes == {"cards": ("structured", 1, 1, 1), "mig": ("structured", 1, 1, 1),
                       "vfs": ("numeric", 1, 0, 3)}
    assert (view.claims_allocated, view.claims_total) == (3, 5)


def test_nodes_and_recent_events_newest_first() -> None:
    view = dashboard(cluster_state(), recent=3)

    assert [n.name for n in view.nodes] == ["card-node", "gpu-node"]
    gpu = view.nodes[1]
    assert gpu.devices == ("gpu.example.com: 1/3 partitions; nic.example.com: 3/4 units")
    assert gpu.pods == 2
    assert len(view.events) == 3
    assert view.events[0].reason == "FailedScheduling"  # the last thing that happened


def test_a_pod_not_tried_yet_says_so() -> None:
    assert pending_reason(Pod(pod("p"))) == "not tried by the scheduler yet"


def test_v1_devices_and_device_classes_are_counted() -> None:
    from allocation.engine.manifests import load_texts
    from allocation.engine.simulation import simulate
    from allocation.presenters.dashboard import V1_MODEL
    from tests import v1_cluster as v1
    from tests.factories import to_yaml

    state = simulate(load_texts([("v1.yaml", to_yaml(v1.cluster()))])).state
    view = dashboard(state)
    [usage] = view.usage
    assert (usage.driver, usage.model, usage.unit, usage.allocated, usage.total,
            usage.nodes) == (v1.DRIVER, V1_MODEL, "devices", 2, 3, 1)
    assert [(c.name, c.mode, c.allocated, c.pending, c.held) for c in view.classes] == [
        ("gpu", V1_MODEL, 1, 0, 1), ("nic", V1_MODEL, 1, 0, 1)]
    assert (view.claims_allocated, view.claims_total) == (2, 2)
    assert view.nodes[0].devices == f"{v1.DRIVER}: 2/3 devices (v1)"
