"""The ClusterAutoScalerPlugin interface: add/remove node, bind, evict, fits and why not."""

from __future__ import annotations

from allocation.engine.autoscaler import AutoscalerSimulation, pod_from_template
from allocation.engine.objects import Node, NodeResourceSlice, PodTemplate
from tests.allocation.engine.autoscaler.builders import gpu_basics, gpu_devices, pod_template
from tests.factories import DRIVER, claim, named_slice, node, pod, run


def _state(extra=()):
    docs = gpu_basics() + [node("n1"), named_slice("n1", gpu_devices(1)),
                           pod_template(), *extra]
    return run(docs).state


def _node(name: str, devices: int = 1):
    raw_slice = named_slice(name, gpu_devices(devices))
    return Node(node(name)), [NodeResourceSlice(raw_slice)]


def _worker(state, name: str):
    return pod_from_template(state.get("PodTemplate", "default", "worker"), name)


def test_bind_allocates_claims_from_templates_and_fits_explains():
    state = _state()
    sim = AutoscalerSimulation.start(state)
    for name in ("a", "b"):
        assert sim.add_pod(_worker(state, name)).ok
    assert sim.fits("a", "n1").ok
    assert sim.bind_pod("a", "n1").ok
    claim_a = sim.state.get("ResourceClaim", "default", "a-gpu")
    assert claim_a.allocation.node_name == "n1" and claim_a.reserved_pods() == ["a"]
    why = sim.fits("b", "n1")
    assert not why.ok
    assert why.message == ("cannot allocate all claims: default/b-gpu requests[0].required[0]: "
                           "no free matching candidate (1 allocated)")
    assert not sim.bind_pod("b", "n1").ok
    assert state.get("Pod", "default", "a") is None  # never written back


def test_add_node_brings_its_slices_and_remove_is_refused_while_used():
    state = _state()
    sim = AutoscalerSimulation(state)
    sim.add_pod(_worker(state, "a"))
    sim.add_pod(_worker(state, "b"))
    assert sim.place("a").message == "n1"
    assert not sim.place("b").ok
    assert sim.add_node(*_node("n2")).ok
    assert not sim.add_node(*_node("n2")).ok  # exists already
    assert sim.place("b").message == "n2"
    refused = sim.remove_node("n2")
    assert not refused.ok
    assert refused.message == ("node n2 is in use by pod(s) default/b and allocated claim(s) "
                               "default/b-gpu; evict them first")
    assert sim.evict_pod("b").ok
    assert sim.remove_node("n2").ok
    assert "n2" not in sim.state.nodes and not sim.state.inventories.get("n2")
    assert sim.state.get("ResourceClaim", "default", "b-gpu").allocation is None


def test_evict_keeps_claims_other_pods_still_use():
    from tests.factories import claim_parameters

    docs = [claim_parameters("shared", 'quantities["memory"] >= "1Gi"', shareable=True),
            claim("c", params="shared"), pod("p1", claims={"gpu": "c"}),
            pod("p2", claims={"gpu": "c"})]
    state = _state(docs)
    assert state.get("Pod", "default", "p2").node_name == "n1"
    sim = AutoscalerSimulation(state)
    assert sim.evict_pod("p1").message == "evicted default/p1 from n1"
    assert sim.state.get("ResourceClaim", "default", "c").allocation is not None
    assert sim.evict_pod("p2").message == ("evicted default/p2 from n1; deallocated "
                                           "default/c")
    assert not sim.evict_pod("p2").ok
    assert state.get("ResourceClaim", "default", "c").reserved_pods() == ["p1", "p2"]


def test_pod_from_template_copies_metadata_and_spec():
    template = PodTemplate(pod_template(annotations={"a": "b"}))
    made = pod_from_template(template, "w-1")
    assert (made.name, made.namespace, made.meta.annotations) == ("w-1", "default", {"a": "b"})
    assert made.claims[0].template_name == "gpu" and made.node_name is None
    assert DRIVER  # the factories' driver backs every slice here
