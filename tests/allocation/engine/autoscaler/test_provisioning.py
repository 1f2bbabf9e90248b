"""ProvisioningRequests and node groups: check-capacity, atomic scale-up, back-off, expiry."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine.autoscaler import AutoscalerSimulation, pod_from_template
from allocation.engine.constants import NODE_GROUP_LABEL
from allocation.engine.manifests import load_texts
from allocation.engine.objects import PodTemplate, ResourceClaimV1
from allocation.engine.objects.provisioning import backoff
from allocation.engine.simulation import simulate
from tests.allocation.engine.autoscaler.builders import (
    condition,
    gpu_basics,
    gpu_devices,
    node_group,
    pod_template,
    provreq,
    v1_devices,
    v1_node_group,
)
from tests.allocation.engine.manifests.v1_docs import class_doc, load, request, slice_doc
from tests.factories import named_slice, node, pod, problems_of, run, to_yaml

CHECK = "check-capacity.autoscaling.x-k8s.io"
DATA = Path(__file__).parents[1] / "models" / "data"


def _base(devices: int = 1, groups=None, extra=()):
    return gpu_basics() + [node("n1"), named_slice("n1", gpu_devices(devices)), pod_template(),
                           *(groups if groups is not None else [node_group(max_size=2)]),
                           *extra]


def _req(state, name: str = "req"):
    return state.get("ProvisioningRequest", "default", name)


def _events(state, reason: str) -> list[str]:
    return [e["message"] for e in state.events.items if e["reason"] == reason]


def test_check_capacity_counts_what_fits_and_books_nothing():
    state = run(_base(devices=2, extra=[
        provreq("a", CHECK, [("worker", 2)]), provreq("b", "check-capacity.kubernetes.io",
                                                      [("worker", 2)], seed=True),
        provreq("c", CHECK, [("worker", 3)])])).state
    for name in ("a", "b"):  # independent: b is not blocked by a
        assert condition(_req(state, name), "CapacityAvailable")["status"] == "True"
        assert condition(_req(state, name), "Provisioned")["reason"] == "CapacityIsFound"
    found = condition(_req(state, "c"), "Provisioned")
    assert (found["status"], found["reason"]) == ("False", "CapacityIsNotFound")
    assert found["message"].startswith("2 of 3 pods fit; pod 3 needs 1 device of class gpu "
                                       "(0/1 nodes are available: 1 cannot allocate all claims")
    assert condition(_req(state, "c"), "CapacityAvailable")["status"] == "False"
    assert condition(_req(state, "c"), "Accepted")["status"] == "True"
    assert list(state.nodes) == ["n1"]  # check-capacity never scales
    assert state.get("Pod", "default", "c-0-0") is None  # nothing booked or written back


def test_atomic_fits_existing_capacity_without_change():
    state = run(_base(devices=2, extra=[provreq(pod_sets=[("worker", 2)])])).state
    found = condition(_req(state), "Provisioned")
    assert (found["status"], found["reason"]) == ("True", "CapacityIsFound")
    assert list(state.nodes) == ["n1"]


def test_atomic_picks_the_least_nodes_ties_by_group_name():
    groups = [node_group("b-pool", max_size=5, devices=2), node_group("a-pool", max_size=5,
                                                                      devices=2),
              node_group("c-pool", max_size=5, devices=4)]
    state = run(_base(groups=groups, extra=[provreq(pod_sets=[("worker", 5)])])).state
    assert sorted(state.nodes) == ["c-pool-1", "n1"]  # 1 node of 4 beats 2 nodes of 2
    groups[2]["spec"]["resourceSlices"][0]["namedResourcesWithAttributes"] = gpu_devices(2)
    state = run(_base(groups=groups, extra=[provreq(pod_sets=[("worker", 5)])])).state
    assert sorted(state.nodes) == ["a-pool-1", "a-pool-2", "n1"]
    assert state.nodes["a-pool-1"].meta.labels == {"pool": "a-pool", NODE_GROUP_LABEL: "a-pool"}
    assert state.get("NodeGroup", None, "a-pool").to_manifest()["status"] == {
        "size": 2, "nodes": ["a-pool-1", "a-pool-2"]}
    found = condition(_req(state), "Provisioned")
    assert found["reason"] == "CapacityIsProvisioned"
    assert found["message"] == ("added 2 nodes to node group a-pool (0 -> 2, maxSize 5): "
                                "a-pool-1, a-pool-2; all 5 pods fit")


def test_impossible_request_adds_nothing_and_says_what_to_do():
    state = run(_base(devices=9, extra=[provreq(pod_sets=[("worker", 10)])],
                      groups=[node_group(max_size=0)])).state
    found = condition(_req(state), "Provisioned")
    assert (found["status"], found["reason"]) == ("False", "CapacityIsNotFound")
    assert found["message"].startswith("9 of 10 pods fit; pod 10 needs 1 device of class gpu")
    assert "; node group gpu-pool is at maxSize 0; nothing was added; retrying in 1m" in \
        found["message"]
    assert list(state.nodes) == ["n1"]


def test_backoff_doubles_to_ten_minutes_then_expires_at_valid_until():
    assert [backoff(n) for n in (1, 2, 3, 4, 5, 9, 400)] == [timedelta(minutes=m) for m in (
        1, 2, 4, 8, 10, 10, 10)]
    docs = _base(extra=[provreq(pod_sets=[("worker", 5)], valid_until="1800")])
    sim = simulate(load_texts([("in.yaml", to_yaml(docs))]))
    controller = sim.controllers[-1]
    wakeups = []
    for _ in range(6):
        wakeups.append(controller.next_wakeup(sim.state) - sim.state.clock.now)
        sim.advance(wakeups[-1])
    assert wakeups == [timedelta(minutes=m) for m in (1, 2, 4, 8, 10, 5)]
    found = condition(_req(sim.state), "Failed")
    assert (found["status"], found["reason"]) == ("True", "Expired")
    assert found["message"].startswith("gave up at 2025-01-01T00:30:00Z: no capacity found "
                                       "before ValidUntilSeconds ran out")
    assert controller.next_wakeup(sim.state) is None
    assert list(sim.state.nodes) == ["n1"]


def test_retry_succeeds_when_capacity_appears_and_seven_day_default():
    docs = _base(extra=[provreq(pod_sets=[("worker", 5)])])
    sim = simulate(load_texts([("in.yaml", to_yaml(docs))]), advance=timedelta(days=6))
    assert condition(_req(sim.state), "Failed") is None
    sim.advance(timedelta(days=1))
    assert condition(_req(sim.state), "Failed")["reason"] == "Expired"
    assert "7 days passed" in condition(_req(sim.state), "Failed")["message"]


def test_missing_pod_template_fails_and_unknown_class_is_ignored():
    state = run(_base(extra=[provreq("a", pod_sets=[("nope", 1)]),
                             provreq("b", "queued-provisioning.gke.io")])).state
    found = condition(_req(state, "a"), "Failed")
    assert (found["status"], found["reason"]) == ("True", "FailedToCreatePods")
    assert "podSets[0]: PodTemplate default/nope not found" in found["message"]
    assert _req(state, "b").conditions == []
    assert _events(state, "UnsupportedProvisioningClass") == [
        "provisioning class 'queued-provisioning.gke.io' is not one this planner simulates "
        "(check-capacity.autoscaling.x-k8s.io, best-effort-atomic-scale-up.autoscaling.x-k8s.io)"
        "; the request is ignored"]


def _consumer(name: str, annotations: dict) -> dict:
    doc = pod(name, templates={"gpu": "gpu"})
    doc["metadata"]["annotations"] = annotations
    return doc


def test_consumers_never_scale_up_others_get_best_effort_and_half_annotations_warn():
    seed_class = "cluster-autoscaler.kubernetes.io/provisioning-class-name"
    seed_consume = "cluster-autoscaler.kubernetes.io/consume-provisioning-request"
    docs = _base(devices=0, groups=[node_group(max_size=1)], extra=[
        _consumer("upstream", {"autoscaling.x-k8s.io/consume-provisioning-request": "x"}),
        _consumer("seed", {seed_class: "c", seed_consume: "x"}),
        _consumer("half", {seed_consume: "x"}), pod("plain", templates={"gpu": "gpu"})])
    state = run(docs).state
    assert sorted(state.nodes) == ["gpu-pool-1", "n1"]  # one node, for "half" alone
    # The scheduler then gives it to the first pending pod in document order (documented).
    assert sum(1 for p in state.pods() if p.node_name) == 1
    assert _events(state, "IncompleteConsumeAnnotations") == [
        f"pod has {seed_consume} but not {seed_class}: both are needed to consume a "
        "ProvisioningRequest, so the pod is treated as an ordinary pod"]
    assert _events(state, "TriggeredScaleUp") == ["pod triggered scale-up of node group "
                                                  "gpu-pool"]
    assert _events(state, "NotTriggerScaleUp") == [
        "pod didn't trigger scale-up: node group gpu-pool is at maxSize 1"] * 2


def test_a_pod_whose_annotations_change_after_a_settle_is_checked_again():
    seed_consume = "cluster-autoscaler.kubernetes.io/consume-provisioning-request"
    simulation = run(_base(devices=0, extra=[_consumer("later", {})]))
    state = simulation.state
    assert _events(state, "IncompleteConsumeAnnotations") == []
    state.events.items = []
    simulation.settle()  # nothing changed: no pod is checked again, nothing is told
    assert state.events.items == []
    pod_obj = state.writable(state.get("Pod", "default", "later"))
    pod_obj.meta.annotations[seed_consume] = "x"
    simulation.settle()
    assert len(_events(state, "IncompleteConsumeAnnotations")) == 1


def test_the_pods_with_half_the_pair_follow_what_the_state_touched():
    """The autoscaler looks again only at the pods a round touched: one completed leaves the
    warned set, one broken joins it, one removed leaves it; the others are not read."""
    from allocation.engine.autoscaler.provisioning import ProvisioningController

    seed_class = "cluster-autoscaler.kubernetes.io/provisioning-class-name"
    seed_consume = "cluster-autoscaler.kubernetes.io/consume-provisioning-request"
    simulation = run(_base(devices=0, extra=[_consumer("half", {seed_consume: "x"}),
                                             _consumer("fine", {}),
                                             _consumer("other", {seed_consume: "y"})]))
    state = simulation.state
    half = next(c for c in simulation.controllers
                if isinstance(c, ProvisioningController)).half
    assert [p.name for p in half.pods(state)] == ["half", "other"]
    state.writable(state.get("Pod", "default", "half")).meta.annotations[seed_class] = "c"
    state.writable(state.get("Pod", "default", "fine")).meta.annotations[seed_class] = "c"
    state.remove(state.get("Pod", "default", "other"))
    assert [p.name for p in half.pods(state)] == ["fine"]


def test_a_fork_checks_the_annotations_of_what_it_changed_and_tells_what_its_parent_told():
    """``Simulation.fork``: the fork's autoscaler knows the pods its parent found with half
    the pair (a scenario's drop does not look at every pod's annotations), and such a pod
    is still told about in the fork, as a simulation tells it."""
    from allocation.engine.autoscaler.provisioning import ProvisioningController

    seed_consume = "cluster-autoscaler.kubernetes.io/consume-provisioning-request"
    simulation = run(_base(devices=0, extra=[_consumer("fine", {}),
                                             _consumer("half", {seed_consume: "x"})]))
    fork = simulation.fork()
    autoscaler = next(c for c in fork.controllers if isinstance(c, ProvisioningController))
    assert autoscaler.half._keys == {fork.state.get("Pod", "default", "half").key}
    assert autoscaler.half._since.keys(fork.state) == []  # reads the fork from its start
    told = len(_events(fork.state, "IncompleteConsumeAnnotations"))
    fork.settle()
    assert len(_events(fork.state, "IncompleteConsumeAnnotations")) == told + 1


def test_scale_from_zero_with_partitionable_and_counter_claims():
    seed = [d for d in yaml.safe_load_all((DATA / "seed-two-cards.yaml").read_text())
            if d["kind"] not in ("Pod", "Node", "NodeResourceSlice")]
    slice_spec = next(d for d in yaml.safe_load_all((DATA / "seed-two-cards.yaml").read_text())
                      if d["kind"] == "NodeResourceSlice")["spec"]
    counter = [d for d in yaml.safe_load_all((DATA / "counter-cluster.yaml").read_text())
               if d["kind"] not in ("Pod", "Node", "NodeResourceCapacity")]
    capacity = next(d for d in yaml.safe_load_all((DATA / "counter-cluster.yaml").read_text())
                    if d["kind"] == "NodeResourceCapacity")
    group = node_group("mixed", max_size=4, devices=0)
    group["spec"]["resourceSlices"] = [{k: v for k, v in slice_spec.items() if k != "nodeName"}]
    group["spec"]["resourceCapacities"] = [{"driverName": capacity["driverName"],
                                            "instances": capacity["instances"]}]
    template = pod_template(claims={"gpu": "two-quarters", "f": "two"})
    docs = seed + counter + [group, template, provreq(pod_sets=[("worker", 3)])]
    state = run(docs).state
    found = condition(_req(state), "Provisioned")
    assert found["reason"] == "CapacityIsProvisioned", found["message"]
    assert sorted(state.nodes) == ["mixed-1", "mixed-2"]
    models = sorted(i.model.name for i in state.inventories["mixed-2"])
    assert models == ["counter", "partitionable"]


def test_capacity_from_node_copies_the_nodes_slices():
    docs = _base(devices=2, groups=[node_group(max_size=3, capacity_from="n1")],
                 extra=[provreq(pod_sets=[("worker", 5)])])
    state = run(docs).state
    assert sorted(state.nodes) == ["gpu-pool-1", "gpu-pool-2", "n1"]
    new = state.nodes["gpu-pool-1"]
    assert new.meta.annotations == {"autoscaling.k8s.io/node-resource-capacity": "n1"}
    assert new.cpu_milli == 8000
    assert [i.usage()["total"] for i in state.inventories["gpu-pool-2"]] == [2]


@settings(max_examples=25, deadline=None)
@given(existing=st.integers(0, 3), per_node=st.integers(1, 3), max_size=st.integers(0, 4),
       count=st.integers(1, 12))
def test_atomic_is_all_or_nothing(existing, per_node, max_size, count):
    docs = _base(devices=existing, groups=[node_group(max_size=max_size, devices=per_node)],
                 extra=[provreq(pod_sets=[("worker", count)])])
    state = run(docs).state
    added = len(state.nodes) - 1
    found = condition(_req(state), "Provisioned")
    needed = max(0, -(-(count - existing) // per_node))
    if needed <= max_size:
        assert found["status"] == "True" and added == needed
    else:
        assert found["status"] == "False" and added == 0


@settings(max_examples=25, deadline=None)
@given(sets=st.lists(st.tuples(st.integers(1, 8), st.integers(1, 5)), min_size=1, max_size=3))
def test_atomic_scale_up_of_several_pod_sets_adds_the_greedy_least(sets):
    # 8-CPU nodes; each set's pods ask for ``cpu`` CPUs. The estimate fills each new node
    # with the waiting pods in order (a set's twins skipped once one is refused there);
    # the count then grows until the pods fit in scheduling order (first fit by name)
    templates = [pod_template(f"t{i}", claims={}, cpu=str(cpu)) for i, (cpu, _) in
                 enumerate(sets)]
    docs = [node("n1", cpu="0"), *templates,
            node_group(max_size=40, devices=0),
            provreq(pod_sets=[(f"t{i}", count) for i, (_, count) in enumerate(sets)])]
    state = run(docs).state
    pods = [cpu for cpu, count in sets for _ in range(count)]
    free: list[int] = []  # the greedy estimate, as written in the docstring
    waiting = list(pods)
    while waiting:
        free.append(8)
        still = []
        for cpu in waiting:
            if cpu <= free[-1]:
                free[-1] -= cpu
            else:
                still.append(cpu)
        waiting = still
    count = len(free)
    while True:  # first fit by name, pods in order
        room = [8] * count
        for cpu in pods:
            spot = next((i for i, left in enumerate(room) if cpu <= left), None)
            if spot is None:
                break
            room[spot] -= cpu
        else:
            break
        count += 1
    assert len(state.nodes) - 1 == count
    assert condition(_req(state), "Provisioned")["status"] == "True"


def test_spec_limits_and_immutable_spec():
    doc = provreq(pod_sets=[("worker", 0)] + [("w", 1)] * 32, valid_until="soon")
    lines = problems_of(to_yaml([doc]))
    assert any("spec.podSets: must have at most 32 items" in line for line in lines), lines
    assert any("spec.podSets[0].count" in line for line in lines), lines
    assert any("spec.parameters.ValidUntilSeconds: ValidUntilSeconds must be a whole number"
               in line for line in lines), lines
    empty = provreq()
    empty["spec"]["podSets"] = []
    assert any("spec.podSets: must have at least 1" in line
               for line in problems_of(to_yaml([empty]))), problems_of(to_yaml([empty]))
    big = problems_of(to_yaml([provreq(pod_sets=[("w", 16385)])]))
    assert any("spec.podSets[0].count" in line for line in big), big
    out = run(_base(extra=[provreq(pod_sets=[("worker", 1)])])).output()
    written = next(i for i in out["items"] if i["kind"] == "ProvisioningRequest")
    assert problems_of(to_yaml([written])) == []
    written["spec"]["podSets"][0]["count"] = 2
    assert problems_of(to_yaml([written])) == [
        "bad.yaml:1 (ProvisioningRequest default/req): spec: field is immutable: the status "
        f"was computed for a different spec (digest "
        f"{written['status']['statuses']['draplanner.io/spec-digest']}); create a new "
        "ProvisioningRequest instead of editing this one, or drop its status"]


def _v1_template(name: str = "gpu", count: int = 1) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [request(count=count)]}}}}


def _v1_run(*requests: dict, count: int = 1):
    """node-1 with one v1 GPU, pods taking a claim from the v1 template ``gpu`` (``count``
    devices each), a node group of 2 nodes with 2 GPUs each."""
    docs = [node("node-1"), class_doc(), _v1_template(count=count),
            slice_doc(v1_devices(1), name="node-1-gpus"), pod_template(),
            v1_node_group(max_size=2), *requests]
    return simulate(load(docs)).state


def test_check_capacity_with_v1_templates_evaluates_the_claims_the_pods_would_get():
    state = _v1_run(provreq("fits", CHECK, [("worker", 1)]),
                    provreq("short", CHECK, [("worker", 2)]))
    found = condition(_req(state, "fits"), "Provisioned")
    assert (found["status"], found["reason"], found["message"]) == (
        "True", "CapacityIsFound", "1 of 1 pod fits")
    found = condition(_req(state, "short"), "Provisioned")
    assert (found["status"], found["reason"], found["message"]) == (
        "False", "CapacityIsNotFound", "1 of 2 pods fit; pod 2 needs 1 device of class gpu "
        "(0/1 nodes are available: 1 cannot allocate all claims)")
    assert list(state.nodes) == ["node-1"]
    assert [c.name for c in state.of_kind(ResourceClaimV1)] == []  # nothing written back


def test_atomic_scale_up_with_v1_templates_adds_the_least_nodes_or_nothing():
    state = _v1_run(provreq("four", pod_sets=[("worker", 4)]))
    found = condition(_req(state, "four"), "Provisioned")
    assert (found["status"], found["reason"], found["message"]) == (
        "True", "CapacityIsProvisioned", "added 2 nodes to node group gpu-pool (0 -> 2, "
        "maxSize 2): gpu-pool-1, gpu-pool-2; all 4 pods fit")
    assert sorted(state.nodes) == ["gpu-pool-1", "gpu-pool-2", "node-1"]
    state = _v1_run(provreq("pairs", pod_sets=[("worker", 3)]), count=2)
    found = condition(_req(state, "pairs"), "Provisioned")
    assert (found["status"], found["reason"], found["message"]) == (
        "False", "CapacityIsNotFound", "0 of 3 pods fit; pod 1 needs 2 devices of class gpu "
        "(0/1 nodes are available: 1 cannot allocate all claims); node group gpu-pool would "
        "need more than its 2 free node(s) (maxSize 2); nothing was added; retrying in 1m")
    assert list(state.nodes) == ["node-1"]


def test_the_pods_of_a_request_get_claims_named_as_upstream_names_them():
    state = _v1_run()
    template = PodTemplate(pod_template())
    state.add(template)
    sim = AutoscalerSimulation(state)
    assert sim.add_pod(pod_from_template(template, "req-0-0")).ok
    pod_ = sim.state.get("Pod", "default", "req-0-0")
    [status] = pod_.to_manifest()["status"]["resourceClaimStatuses"]
    claim = sim.state.get("ResourceClaim", "default", status["resourceClaimName"])
    assert status["name"] == "gpu" and status["resourceClaimName"].startswith("req-0-0-gpu-")
    assert claim.meta.owner_references[0]["uid"] == pod_.meta.uid
    assert sim.place("req-0-0").message == "node-1"
    assert claim.name in [c.name for c in sim.state.of_kind(ResourceClaimV1)
                          if c.allocated]
