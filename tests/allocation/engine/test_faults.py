"""allocation.engine.faults: a controller's failure on one object stays with that object."""

from allocation.engine import faults
from allocation.engine.claims import ClaimController
from allocation.engine.manifests import load_texts
from allocation.engine.objects import Pod
from allocation.engine.scheduler import Scheduler
from allocation.engine.simulation import simulate
from tests import factories as f


def _cluster() -> list[dict]:
    """Three pods, each with its own claim, on a node with three devices."""
    docs = [f.node("n1"), f.named_slice("n1", [f.device(f"d{i}") for i in range(3)]),
            f.resource_class()]
    for i in (1, 2, 3):
        docs += [f.claim(f"c{i}"), f.pod(f"p{i}", claims={"gpu": f"c{i}"})]
    return docs


def _fail_for(name: str, real, error: type[Exception] = RuntimeError):
    def flaky(self, state, pod, *args):
        if pod.name == name:
            raise error(f"injected failure for {pod.name}")
        return real(self, state, pod, *args)

    return flaky


def _reports(simulation, name: str) -> list[dict]:
    return [e for e in simulation.state.events.items if e["reason"] == faults.EVENT_REASON
            and e["involvedObject"]["name"] == name]


def test_a_scheduler_failure_on_one_pod_is_confined_to_it(monkeypatch):
    monkeypatch.setattr(Scheduler, "_schedule", _fail_for("p2", Scheduler._schedule))
    simulation = f.run(_cluster())
    state = simulation.state
    assert [state.get("Pod", "default", p).node_name for p in ("p1", "p2", "p3")] == \
        ["n1", None, "n1"]
    assert state.get("ResourceClaim", "default", "c3").allocation is not None
    assert state.get("ResourceClaim", "default", "c2").allocation is None
    pod = state.get("Pod", "default", "p2")
    text = "scheduler: RuntimeError: injected failure for p2"
    assert pod.condition("PodScheduled") == {
        "type": "PodScheduled", "status": "False", "reason": faults.SCHEDULER_ERROR,
        "message": text, "lastTransitionTime": state.clock.stamp()}
    assert pod.meta.annotations[faults.ERROR_ANNOTATION] == text
    [event] = _reports(simulation, "p2")
    assert event["type"] == "Warning" and event["message"].startswith(text)
    assert state.failures[pod.key].stage == "scheduler"


def test_the_same_failure_again_is_not_reported_again_and_recovery_clears_it(monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(Scheduler, "_schedule", _fail_for("p2", Scheduler._schedule))
        first = f.run(_cluster()).output()
        again = simulate(load_texts([("again.yaml", f.to_yaml(first["items"]))]))
    # A fixed point across runs (the worker's passes): nothing changes, no new Event.
    assert again.output() == first
    assert len(_reports(again, "p2")) == 1  # the Event of the first run, adopted
    recovered = simulate(load_texts([("fixed.yaml", f.to_yaml(first["items"]))]))
    pod = recovered.state.get("Pod", "default", "p2")
    assert pod.node_name == "n1"
    assert faults.ERROR_ANNOTATION not in pod.meta.annotations
    assert pod.condition("PodScheduled")["status"] == "True"


def test_a_claim_controller_failure_on_one_pod_is_confined_to_it(monkeypatch):
    monkeypatch.setattr(ClaimController, "_create_for",
                        _fail_for("p1", ClaimController._create_for))
    docs = [f.node("n1"), f.named_slice("n1", [f.device("d0"), f.device("d1")]),
            f.resource_class(), f.claim_template("t"),
            f.pod("p1", templates={"gpu": "t"}), f.pod("p2", templates={"gpu": "t"})]
    state = f.run(docs).state
    assert state.get("ResourceClaim", "default", "p1-gpu") is None
    assert state.get("Pod", "default", "p2").node_name == "n1"
    p1 = state.get("Pod", "default", "p1")
    assert p1.meta.annotations[faults.ERROR_ANNOTATION].startswith("claims: RuntimeError")
    # Left alone by every controller: the scheduler did not overwrite the report.
    assert p1.condition("PodScheduled")["reason"] == faults.SCHEDULER_ERROR


def test_a_recursion_error_is_reported_the_same_wherever_the_stack_ran_out(monkeypatch):
    monkeypatch.setattr(Scheduler, "_schedule",
                        _fail_for("p2", Scheduler._schedule, RecursionError))
    state = f.run(_cluster()).state
    assert state.get("Pod", "default", "p2").meta.annotations[faults.ERROR_ANNOTATION] == (
        "scheduler: RecursionError: maximum recursion depth exceeded (the object is nested "
        "too deeply)")
    assert state.get("Pod", "default", "p3").node_name == "n1"


def test_the_fallback_manifest_writes_metadata_and_conditions_only():
    raw = f.pod("p1")
    raw["spec"]["deep"] = {"a": {"b": [1, 2]}}
    pod = Pod(raw)
    pod.meta.annotations[faults.ERROR_ANNOTATION] = "writer: RecursionError"
    pod.set_condition({"type": "PodScheduled", "status": "False", "reason": "SchedulerError"})
    out = faults.fallback_manifest(pod)
    assert out["metadata"]["annotations"] == {faults.ERROR_ANNOTATION: "writer: RecursionError"}
    assert out["status"]["conditions"][0]["reason"] == "SchedulerError"
    assert out["spec"] is raw["spec"]  # shared, not copied: that is what could fail
    assert "annotations" not in raw["metadata"] and "status" not in raw


def test_describe_is_one_stable_line():
    assert faults.describe("writer", KeyError("spec")) == "writer: KeyError: 'spec'"
    assert faults.describe("x", ValueError("a\nb")) == "x: ValueError: a"
    assert faults.describe("x", RuntimeError()) == "x: RuntimeError"
    assert len(faults.describe("x", ValueError("v" * 1000))) == 300


def test_a_driver_controller_failure_on_one_claim_is_confined_to_it(monkeypatch):
    from allocation.engine.controlplane.driver import DriverController
    from tests.allocation.engine.controlplane.cp_factories import (
        cp_claim,
        cp_class,
        driver_sim,
        vendor_params,
    )

    real = DriverController._check_claim

    def flaky(self, state, sim, book, claim, rc):
        if claim.name == "first":
            raise ValueError("injected")
        return real(self, state, sim, book, claim, rc)

    monkeypatch.setattr(DriverController, "_check_claim", flaky)
    state = f.run([f.node("n1"), driver_sim("net.example.com", [("pa", 4, None)]),
                   cp_class("acc", "net.example.com"), vendor_params("one"),
                   cp_claim("first", "acc", "one", mode="Immediate"),
                   cp_claim("second", "acc", "one", mode="Immediate")]).state
    first = state.get("ResourceClaim", "default", "first")
    assert first.allocation is None
    assert first.meta.annotations[faults.ERROR_ANNOTATION] == "drivers: ValueError: injected"
    assert state.get("ResourceClaim", "default", "second").allocation is not None


def test_an_autoscaler_failure_on_one_request_is_confined_to_it(monkeypatch):
    from allocation.engine.autoscaler.provisioning import ProvisioningController
    from tests.allocation.engine.autoscaler.builders import (
        condition,
        gpu_basics,
        gpu_devices,
        pod_template,
        provreq,
    )

    real = ProvisioningController._request

    def flaky(self, state, req):
        if req.name == "a":
            raise KeyError("injected")
        return real(self, state, req)

    monkeypatch.setattr(ProvisioningController, "_request", flaky)
    check = "check-capacity.autoscaling.x-k8s.io"
    state = f.run([*gpu_basics(), f.node("n1"), f.named_slice("n1", gpu_devices(2)),
                   pod_template(), provreq("a", check), provreq("b", check)]).state
    a, b = (state.get("ProvisioningRequest", "default", n) for n in ("a", "b"))
    assert a.meta.annotations[faults.ERROR_ANNOTATION] == "autoscaler: KeyError: 'injected'"
    assert condition(a, "Provisioned") is None
    assert condition(b, "Provisioned")["reason"] == "CapacityIsFound"


def test_clear_recovered_sees_annotations_added_since_its_last_look_and_only_those_left():
    """After its first walk of a state, clear_recovered looks only at touched objects: an
    annotation written since (touched) is cleared, one on a failing object stays, and a new
    ``touched`` list (the worker's catch-up) loses nothing touched in the old one."""
    from allocation.engine.state import ClusterState

    state = ClusterState.build(load_texts([("c.yaml", f.to_yaml(
        [f.node("n0"), f.pod("a"), f.pod("b"), f.pod("c")]))]))
    faults.clear_recovered(state)  # the first look walks every object
    a, b, c = (state.get("Pod", "default", n) for n in "abc")
    state.writable(a).meta.annotations[faults.ERROR_ANNOTATION] = "x"
    state.writable(b).meta.annotations[faults.ERROR_ANNOTATION] = "x"
    state.failures[b.key] = faults.Failure("scheduler", "x")
    faults.clear_recovered(state)
    assert faults.ERROR_ANNOTATION not in state.get("Pod", "default", "a").meta.annotations
    assert faults.ERROR_ANNOTATION in state.get("Pod", "default", "b").meta.annotations
    state.writable(c).meta.annotations[faults.ERROR_ANNOTATION] = "x"
    state.touched = []  # replaced, as the catch-up does
    state.failures.clear()
    faults.clear_recovered(state)
    for name in "abc":
        assert faults.ERROR_ANNOTATION not in state.get("Pod", "default", name).meta.annotations


def test_a_fork_clears_what_its_parent_knew_to_be_flagged_as_a_walk_of_it_would():
    """carry_flagged (Simulation.fork): the fork starts from the keys its parent knows to
    carry the annotation, and clears what a first walk of the fork would clear."""
    from allocation.engine.state import ClusterState

    def fork_of(state, carried: bool):
        fork = state.fork()
        if carried:
            faults.carry_flagged(state, fork)
        fork.failures.clear()  # b recovers in the fork
        fork.writable(fork.get("Pod", "default", "c")).meta.annotations[
            faults.ERROR_ANNOTATION] = "x"
        faults.clear_recovered(fork)
        return {p.name: faults.ERROR_ANNOTATION in p.meta.annotations for p in fork.pods()}

    state = ClusterState.build(load_texts([("c.yaml", f.to_yaml(
        [f.node("n0"), f.pod("a"), f.pod("b"), f.pod("c")]))]))
    faults.clear_recovered(state)
    state.writable(state.get("Pod", "default", "b")).meta.annotations[
        faults.ERROR_ANNOTATION] = "x"  # touched after the parent's last look
    state.failures[state.get("Pod", "default", "b").key] = faults.Failure("scheduler", "x")
    assert fork_of(state, carried=True) == fork_of(state, carried=False) == {
        "a": False, "b": False, "c": False}
    faults.clear_recovered(state)
    assert faults.ERROR_ANNOTATION in state.get("Pod", "default", "b").meta.annotations
