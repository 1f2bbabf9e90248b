"""Which pods and nodes a pass of the scheduler visits (``allocation/engine/scheduler.py``):
the pods its quiet memo does not know, a pod bound just now known from the next pass, and a
pinned pod's named nodes only; each against what visiting everything gives."""

from __future__ import annotations

import json

from allocation.engine.constants import EXPLAIN_ANNOTATION
from tests.factories import (
    claim,
    claim_template,
    device,
    named_slice,
    node,
    pod,
    resource_class,
    run,
)


def test_the_pods_a_round_visits_are_those_a_walk_of_every_pod_would_visit(monkeypatch):
    """The scheduler looks only at the pods its memo does not know (Quiet.unknown_of) while
    the nodes stand: each round, the pods it would visit are those the filter over every
    pod gives, through pods added, finishing and placed, and a node added."""
    import random

    from allocation.engine.manifests import build_object, load_texts
    from allocation.engine.scheduler import Scheduler
    from allocation.engine.simulation import simulate
    from tests.factories import to_yaml

    checked = []
    real = Scheduler._candidates

    def candidates(self, state):
        got = real(self, state)
        known, nodes = self.quiet.known, state.nodes

        def todo(pods):
            return [p for p in pods if not (known(p) and p.node_name and p.node_name in nodes)
                    and not p.terminated]

        assert todo(got) == todo(state.pods())
        checked.append(len(got))
        return got

    monkeypatch.setattr(Scheduler, "_candidates", candidates)
    docs = [resource_class(), claim_template("one"),
            *(x for i in range(3) for x in (node(f"n{i}"), named_slice(f"n{i}", [
                device(f"g{j}") for j in range(2)]))),
            *(pod(f"p{i}", templates={"g": "one"}) for i in range(5))]
    sim = simulate(load_texts([("c.yaml", to_yaml(docs))]))
    state, rng = sim.state, random.Random(11)
    for step in range(12):
        pods = [p for p in state.pods() if not p.terminated]
        choice = rng.choice(["pod", "pod", "done", "node"])
        if choice == "done" and pods:
            target = state.writable(rng.choice(pods))
            if target.node_name:
                state.charge(target, target.node_name, -1)
            target.phase = "Succeeded"
        elif choice == "node":
            state.add_node(build_object(node(f"m{step}")), [build_object(named_slice(
                f"m{step}", [device(f"h{step}")]))])
        else:
            state.add(build_object(pod(f"q{step}", templates={"g": "one"})))
        sim.settle()
    assert checked and min(checked) < len(list(state.pods()))  # the memo did pass over pods


def test_a_forks_first_round_visits_what_the_fork_touched_as_a_walk_of_every_pod_would():
    """Simulation.fork carries the node order the scheduler last looked at: while the fork's
    nodes stand, its first round visits the pods its memo does not know, and those are the
    pods a walk of every pod would visit; a fork whose nodes change walks every pod."""
    from allocation.engine.manifests import build_object, load_texts
    from allocation.engine.scheduler import Scheduler
    from allocation.engine.simulation import simulate
    from tests.factories import to_yaml

    docs = [resource_class(), claim_template("one"),
            *(x for i in range(2) for x in (node(f"n{i}"), named_slice(f"n{i}", [
                device(f"g{j}") for j in range(3)]))),
            *(pod(f"p{i}", templates={"g": "one"}) for i in range(4))]
    base = simulate(load_texts([("c.yaml", to_yaml(docs))]))

    def first_round(fork) -> tuple[int, list[str], list[str]]:
        """(how many pods the first round's candidates are, the pods it visits, the pods a
        walk of every pod would visit)."""
        scheduler = next(c for c in fork.controllers if isinstance(c, Scheduler))
        known, nodes = scheduler.quiet.known, fork.state.nodes
        scheduler.quiet.observe(fork.state)
        candidates = scheduler._candidates(fork.state)
        visited = [p.name for p in candidates
                   if not (known(p) and p.node_name and p.node_name in nodes)]
        walked = [p.name for p in fork.state.pods()
                  if not (known(p) and p.node_name and p.node_name in nodes)]
        return len(candidates), visited, walked

    fork = base.fork()
    fork.state.add(build_object(pod("new", templates={"g": "one"})))
    count, visited, walked = first_round(fork)
    assert visited == walked == ["new"] and count < len(list(fork.state.pods()))
    grown = base.fork()
    grown.state.add_node(build_object(node("m0")))
    count, visited, walked = first_round(grown)
    assert visited == walked and count == len(list(grown.state.pods()))


def _slow(sim):
    """``sim`` with the scheduler visiting a pod it just bound again (no
    ``Quiet.remember_after``): the path the shortcut must agree with."""
    from allocation.engine.scheduler import Scheduler

    for controller in sim.controllers:
        if isinstance(controller, Scheduler):
            controller._remember_bound = lambda state, pod, needs: None
    return sim


def test_a_pod_known_quiet_once_bound_gives_what_a_second_visit_gives():
    """A pod the scheduler binds is known from the next pass (``_remember_bound``) rather
    than visited again: in a kept state through pods added, finishing and edited, claims
    shared, deleted, edited and marked for deallocation, nodes added, and in forks, every
    object, condition and Event is as when each bound pod is visited again."""
    import random

    from allocation.engine.changes import apply_changes
    from allocation.engine.manifests import build_object, load_texts
    from allocation.engine.objects import ObjectKey
    from allocation.engine.simulation import Simulation
    from tests.factories import to_yaml

    being_deallocated = claim("gone-soon", status={"deallocationRequested": True})
    docs = [resource_class(), claim_template("one"), claim("shared"), claim("solo"),
            being_deallocated,
            *(x for i in range(3) for x in (node(f"n{i}"), named_slice(f"n{i}", [
                device(f"g{j}") for j in range(2)]))),
            pod("s0", claims={"g": "shared"}), pod("s1", claims={"g": "shared"}),
            pod("d0", claims={"g": "gone-soon"}), pod("c0", claims={"g": "solo"}),
            *(pod(f"p{i}", templates={"g": "one"}) for i in range(4))]

    def make():
        return Simulation.from_loaded(load_texts([("c.yaml", to_yaml(docs))]))

    def out(sim) -> str:
        return json.dumps(sim.output(), sort_keys=True)

    fast, slow = make(), _slow(make())
    fast.settle()
    slow.settle()
    assert out(fast) == out(slow)
    rng = random.Random(7)
    for step in range(16):
        choice = rng.choice(["pod", "claim-pod", "done", "drop-claim", "node", "fork"])
        names = sorted(p.name for p in fast.state.pods() if not p.terminated)
        gone, new = [], []
        if choice == "pod":
            new = [pod(f"q{step}", templates={"g": "one"})]
        elif choice == "claim-pod":
            new = [claim(f"c{step}"), pod(f"r{step}", claims={"g": f"c{step}"})]
        elif choice == "done" and names:
            new = [pod(rng.choice(names), phase="Succeeded")]
        elif choice == "drop-claim":
            claims = sorted(c.name for c in fast.state.claims())
            gone = [ObjectKey("ResourceClaim", "default", rng.choice(claims))] if claims else []
        elif choice == "node":
            new = [node(f"m{step}"), named_slice(f"m{step}", [device(f"h{step}")])]
        if choice == "fork":
            fast, slow = fast.fork(), _slow(slow.fork())
            for sim in (fast, slow):
                sim.state.add(build_object(pod(f"f{step}", templates={"g": "one"})))
        else:
            for sim in (fast, slow):
                assert apply_changes(sim.state, gone, [build_object(d) for d in new])
        fast.settle()
        slow.settle()
        assert out(fast) == out(slow), f"step {step}: {choice}"


def _pinned(name: str, node_name: str, cpu: str = "1") -> dict:
    doc = pod(name, cpu=cpu)
    doc["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                "values": [node_name]}]}]}}}
    return doc


def test_a_pinned_pod_is_scanned_for_on_its_node_only_with_the_same_result(monkeypatch):
    """A scan visits only the nodes a pod's required affinity names (Scheduler._scan); the
    placements and explanations equal those of a scan of every node."""
    from allocation.engine.scheduler import Scheduler

    docs = [*(node(f"w{i}", cpu="2") for i in range(8)), node("w9", cpu="2", unschedulable=True),
            _pinned("p-last", "w7"), _pinned("p-first", "w0"), _pinned("again", "w7"),
            _pinned("full", "w7", cpu="1"), _pinned("cordoned", "w9"), _pinned("nowhere", "x"),
            pod("free", cpu="1")]
    visited: list[int] = []
    scan = Scheduler._scan

    def counted(state, pod_, start, total):
        found = list(scan(state, pod_, start, total))
        visited.extend(found)
        return found

    monkeypatch.setattr(Scheduler, "_scan", staticmethod(counted))
    fast = run(docs).state
    assert len(visited) < 8 * 7  # not every node for every pinned pod
    monkeypatch.setattr(Scheduler, "_scan", staticmethod(
        lambda state, pod_, start, total: range(start, total)))
    every = run(docs).state
    placed = {p.name: p.node_name for p in fast.pods()}
    assert placed == {p.name: p.node_name for p in every.pods()}
    assert placed["p-last"] == placed["again"] == "w7" and placed["full"] is None
    assert placed["cordoned"] is None and placed["nowhere"] is None
    explained = {p.name: p.meta.annotations.get(EXPLAIN_ANNOTATION) for p in fast.pods()}
    assert explained == {p.name: p.meta.annotations.get(EXPLAIN_ANNOTATION)
                         for p in every.pods()}
    assert explained["full"] and explained["nowhere"]
