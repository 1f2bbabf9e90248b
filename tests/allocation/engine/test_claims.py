"""The claim lifecycle: template claims, reservations, deallocation, Immediate claims."""

from __future__ import annotations

from tests.factories import (
    claim,
    claim_parameters,
    claim_template,
    device,
    named_slice,
    node,
    pod,
    resource_class,
    run,
)
from tests.quiet_probe import rounds_not_asking

BASE = [resource_class("gpu"), node("n0"), named_slice("n0", [device("d0")]),
        claim_parameters("any", "true")]


def _allocated(name="c", mode=None, holder="done"):
    status = {"driverName": "cards.dra.example.com", "allocation": {"resourceHandles": [{
        "driverName": "cards.dra.example.com", "structuredData": {
            "nodeName": "n0", "namedResourcesWithAttributes": {"resources": [{"id": "d0"}]}}}]},
        "reservedFor": [{"resource": "pods", "name": holder, "uid": "x"}]}
    doc = claim(name, params="any", mode=mode, status=status)
    doc["metadata"]["finalizers"] = ["structured.dra.k8s.io/delete-protection"]
    return doc


def test_template_claims_are_named_after_pod_and_owned_by_it():
    sim = run(BASE + [claim_template("t", params="any"), pod("p", templates={"gpu": "t"})])
    c = sim.state.get("ResourceClaim", "default", "p-gpu")
    assert c.owner_pod == "p"
    assert c.meta.owner_references[0]["uid"] == sim.state.get("Pod", "default", "p").meta.uid


def test_a_claim_not_owned_by_the_pod_is_not_used():
    sim = run(BASE + [claim_template("t", params="any"), claim("p-gpu", params="any"),
                      pod("p", templates={"gpu": "t"})])
    message = sim.state.get("Pod", "default", "p").condition("PodScheduled")["message"]
    assert "not owned by it" in message


def test_finished_pod_releases_and_wait_for_first_consumer_is_deallocated():
    sim = run(BASE + [_allocated(), pod("done", claims={"x": "c"}, node_name="n0",
                                       phase="Succeeded"),
                      pod("next", claims={"x": "c"})])
    c = sim.state.get("ResourceClaim", "default", "c")
    # Released by "done", deallocated, then allocated again for "next".
    assert c.reserved_pods() == ["next"]
    reasons = [e["reason"] for e in sim.state.events.items]
    assert reasons[:2] == ["Released", "Deallocated"] and "Allocated" in reasons


def test_immediate_claims_stay_allocated_when_unused():
    sim = run(BASE + [_allocated(mode="Immediate"),
                      pod("done", claims={"x": "c"}, node_name="n0", phase="Failed")])
    c = sim.state.get("ResourceClaim", "default", "c")
    assert c.reserved_for == [] and c.allocation is not None
    assert c.meta.finalizers == ["structured.dra.k8s.io/delete-protection"]


def test_deleted_pod_releases_its_claim():
    gone = pod("done", claims={"x": "c"}, node_name="n0")
    gone["metadata"]["deletionTimestamp"] = "2024-12-31T00:00:00Z"
    sim = run(BASE + [_allocated(), gone])
    c = sim.state.get("ResourceClaim", "default", "c")
    assert c.allocation is None and c.meta.finalizers == []


def test_pre_scheduled_pod_gets_its_claims_on_its_node():
    sim = run(BASE + [node("n1"), claim_template("t", params="any"),
                      pod("bound", templates={"g": "t"}, node_name="n0")])
    c = sim.state.get("ResourceClaim", "default", "bound-g")
    assert c.allocation.node_name == "n0" and c.reserved_pods() == ["bound"]


def test_pre_scheduled_pod_whose_node_cannot_serve_is_explained():
    sim = run(BASE + [node("n1"), claim_template("t", params="any"),
                      pod("bound", templates={"g": "t"}, node_name="n1")])
    p = sim.state.get("Pod", "default", "bound")
    assert p.node_name == "n1"
    assert "pod is bound to n1, where its claims cannot be allocated" in \
        p.condition("PodScheduled")["message"]


def test_unused_immediate_claim_is_allocated_when_a_pod_needs_it():
    sim = run(BASE + [claim("c", params="any", mode="Immediate"), pod("p", claims={"x": "c"})])
    assert sim.state.get("ResourceClaim", "default", "c").allocation.node_name == "n0"


def test_a_pod_of_the_same_name_in_another_namespace_does_not_keep_a_reservation():
    from tests.factories import claim, named_slice, node, pod, resource_class, run
    from tests.factories import device as dev

    finished = pod("p", claims={"gpu": "c"}, namespace="team-a")
    finished["spec"]["nodeName"] = "n"
    finished["status"] = {"phase": "Succeeded"}
    held = claim("c", namespace="team-a")
    held["metadata"]["finalizers"] = ["structured.dra.k8s.io/delete-protection"]
    held["status"] = {"driverName": "cards.dra.example.com",
                      "reservedFor": [{"resource": "pods", "name": "p"}],
                      "allocation": {"resourceHandles": [{
                          "driverName": "cards.dra.example.com",
                          "structuredData": {"nodeName": "n", "namedResourcesWithAttributes": {
                              "resources": [{"id": "gpu-0"}]}}}]}}
    docs = [node("n"), named_slice("n", [dev("gpu-0")]), resource_class("gpu"), held,
            finished, pod("p", namespace="team-b")]
    sim = run(docs)
    released = sim.state.get("ResourceClaim", "team-a", "c")
    assert released.reserved_for == []
    assert released.allocation is None  # WaitForFirstConsumer: deallocated once unused


def test_without_a_seed_template_no_pod_is_visited_and_one_added_later_is_served():
    """The shortcut (no seed template in the state: no pod is visited for template claims)
    changes nothing a visit would, and a template added later still gets its claim made."""
    from allocation.engine.claims import ClaimController
    from allocation.engine.manifests import load_texts
    from allocation.engine.state import ClusterState
    from tests.factories import to_yaml

    state = ClusterState.build(load_texts([("in.yaml", to_yaml(
        BASE + [pod("p", templates={"gpu": "t"})]))]))
    controller, visited = ClaimController(), []
    create = controller._create_for
    controller._create_for = lambda s, p: visited.append(p.name) or create(s, p)
    assert not controller._create_from_templates(state)
    assert visited == []
    assert not create(state, state.get("Pod", "default", "p"))  # the slow path: nothing
    [template] = load_texts([("t.yaml", to_yaml([claim_template("t", params="any")]))]).objects
    state.add(template)
    assert controller._create_from_templates(state)
    assert visited == ["p"] and state.get("ResourceClaim", "default", "p-gpu") is not None


def test_a_template_claim_shares_the_templates_spec_and_copies_its_metadata():
    """``claim_from_template`` copies the template's labels and annotations with
    ``json_copy`` (the claim's metadata changes), and shares its claim spec, which nothing
    changes in place (as a v1 template claim's): the claim's document is still a copy."""
    import copy

    from allocation.engine.claims import claim_from_template
    from allocation.engine.objects import Pod, ResourceClaimTemplate

    doc = claim_template("t", params="any")
    doc["spec"]["metadata"] = {"labels": {"a": "b"}, "annotations": {"n": "x"}}
    template = ResourceClaimTemplate(copy.deepcopy(doc))
    made = claim_from_template(Pod(pod("p", templates={"gpu": "t"})), "gpu", template)
    assert made.raw["spec"] is template.claim_spec
    written = made.to_manifest()
    assert written["spec"] == doc["spec"]["spec"]
    written["spec"]["parametersRef"]["name"] = "changed"  # the document is the caller's
    assert template.claim_spec == doc["spec"]["spec"]
    assert made.raw["metadata"]["labels"] == {"a": "b"}
    assert made.raw["metadata"]["labels"] is not template.claim_metadata["labels"]
    assert made.meta.annotations == {"n": "x", "resource.kubernetes.io/pod-claim-name": "gpu"}
    assert list(made.raw["metadata"]) == ["name", "namespace", "labels", "annotations",
                                          "ownerReferences"]


def test_a_template_claim_of_a_template_without_metadata_has_no_labels():
    from allocation.engine.claims import claim_from_template
    from allocation.engine.objects import Pod, ResourceClaimTemplate

    for metadata in (None, {}, {"labels": {}, "annotations": {}}):
        doc = claim_template("t", params="any")
        if metadata is not None:
            doc["spec"]["metadata"] = metadata
        made = claim_from_template(Pod(pod("p", templates={"gpu": "t"})), "gpu",
                                   ResourceClaimTemplate(doc))
        assert list(made.raw["metadata"]) == ["name", "namespace", "annotations",
                                              "ownerReferences"]
        assert made.raw["metadata"]["annotations"] == {
            "resource.kubernetes.io/pod-claim-name": "gpu"}
        assert made.raw["metadata"]["ownerReferences"][0]["name"] == "p"


def test_a_claim_is_known_quiet_only_when_each_reservation_is_its_running_pods():
    """A reservation stands when its pod runs and its uid, if any, is a running pod's; the
    claim needs nothing (its memo knows it) only when each reservation is its named pod's,
    by name and uid (a claim released in one round is known in the next), and such a claim
    depends on those pods."""
    from allocation.engine.claims import ClaimController
    from allocation.engine.objects import stable_uid

    def reserved(*refs) -> dict:
        return {"reservedFor": [dict(r) for r in refs]}

    def allocated(name: str, status: dict) -> dict:
        doc = claim(name, params="any", status={**status, **_allocated(name)["status"],
                                                "reservedFor": status["reservedFor"]})
        doc["status"]["allocation"]["shareable"] = True
        [handle] = doc["status"]["allocation"]["resourceHandles"]
        handle["structuredData"]["namedResourcesWithAttributes"]["resources"] = [{"id": name}]
        return doc

    a_uid, b_uid = stable_uid("Pod", "default", "a"), stable_uid("Pod", "default", "b")
    own = {"resource": "pods", "name": "a", "uid": a_uid}
    cases = {
        "own": (reserved(own), [own], True),
        "no-uid": (reserved({"resource": "pods", "name": "a"}),
                   [{"resource": "pods", "name": "a"}], True),
        "other-uid": (reserved({"resource": "pods", "name": "a", "uid": b_uid}),
                      [{"resource": "pods", "name": "a", "uid": b_uid}], False),
        "not-a-pod": (reserved({"resource": "other", "name": "x"}, own),
                      [{"resource": "other", "name": "x"}, own], False),
        "gone": (reserved({"resource": "pods", "name": "nobody"}, own), [own], True),
        "unknown-uid": (reserved(own, {"resource": "pods", "name": "b", "uid": "zz"}),
                        [own], True),
    }
    docs = [resource_class("gpu"), node("n0"), named_slice("n0", [device(n) for n in cases]),
            claim_parameters("any", "true"), pod("a", node_name="n0"),
            pod("b", node_name="n0"),
            *(allocated(name, status) for name, (status, _, _) in cases.items())]
    sim = run(docs)
    controller = next(c for c in sim.controllers if isinstance(c, ClaimController))
    for name, (_status, kept, quiet) in cases.items():
        got = sim.state.get("ResourceClaim", "default", name)
        assert got.reserved_for == kept, name
        assert controller.quiet.known(got) is quiet, name
    released = [e["involvedObject"]["name"] for e in sim.state.events.items
                if e["reason"] == "Released"]
    assert released == ["gone", "unknown-uid"]
    sim.state.writable(sim.state.get("Pod", "default", "a"))
    controller.quiet.observe(sim.state)
    assert not controller.quiet.known(sim.state.get("ResourceClaim", "default", "own"))


def test_a_claim_made_this_pass_is_not_visited_for_release_until_the_next_round():
    """``_release`` passes over the claims ``_create_from_templates`` made in the same pass
    (nothing to release, and a memo answer would be forgotten at the next round, their
    creation touched after the round's look); a claim of the input is visited, and the next
    round visits the new claim as before."""
    from allocation.engine.claims import ClaimController
    from allocation.engine.manifests import load_texts
    from allocation.engine.state import ClusterState
    from tests.factories import to_yaml

    state = ClusterState.build(load_texts([("in.yaml", to_yaml(
        BASE + [claim_template("t", params="any"), claim("input", params="any"),
                pod("p", templates={"gpu": "t"})]))]))
    controller, visited = ClaimController(), []
    release = controller._release_claim
    controller._release_claim = lambda s, c, live: visited.append(c.name) or release(s, c,
                                                                                     live)
    assert controller.reconcile(state)
    assert state.get("ResourceClaim", "default", "p-gpu") is not None
    assert visited == ["input"]
    visited.clear()
    assert not controller.reconcile(state)
    assert visited == ["p-gpu"]
    assert controller.quiet.known(state.get("ResourceClaim", "default", "p-gpu"))


def _spy(controller, visits: list[str]) -> None:
    """Record in ``visits`` the pods and claims ``controller`` visits."""
    create, release = controller._create_for, controller._release_claim
    controller._create_for = lambda s, p: visits.append(p.name) or create(s, p)
    controller._release_claim = lambda s, c, live: visits.append(c.name) or release(s, c, live)


def _spied(docs: list[dict]):
    """A simulation of ``docs`` whose claim controller records the pods and claims it
    visits, and a twin whose scheduler tells nobody of the pods it binds."""
    from allocation.engine.claims import ClaimController
    from allocation.engine.manifests import load_texts
    from allocation.engine.scheduler import Scheduler
    from allocation.engine.simulation import Simulation
    from tests.factories import to_yaml

    sims, visits = [], []
    for told in (True, False):
        sim = Simulation.from_loaded(load_texts([("in.yaml", to_yaml(docs))]))
        controller = next(c for c in sim.controllers if isinstance(c, ClaimController))
        if told:
            _spy(controller, visits)
        else:
            next(c for c in sim.controllers if isinstance(c, Scheduler)).bound_listeners = []
        sim.settle()
        sims.append(sim)
    return sims[0], sims[1], visits


def test_the_claim_controller_remembers_the_pods_the_scheduler_binds_and_their_claims():
    """Told by the scheduler (``pod_bound``), the claim controller knows a pod bound just
    now and a claim reserved for it alone from its next round, with no second visit; a claim
    other pods share is visited as before. The outcome is the one without being told."""
    from allocation.engine.claims import ClaimController

    shared = claim("shared", params="any")
    docs = [resource_class("gpu"), node("n0"),
            named_slice("n0", [device("d0"), device("d1")]), claim_parameters("any", "true"),
            claim_template("t", params="any"), shared,
            pod("p", templates={"gpu": "t"}, claims={"s": "shared"}),
            pod("q", claims={"s": "shared"})]
    shared["spec"]["allocationMode"] = "WaitForFirstConsumer"
    told, untold, visits = _spied(docs)
    # p's first visit made its claim; after that neither p nor p-gpu is visited again
    assert visits.count("p") == 1 and "p-gpu" not in visits
    assert "shared" in visits  # reserved for p and q: visited as before
    controller = next(c for c in told.controllers if isinstance(c, ClaimController))
    state = told.state
    assert controller.quiet.known(state.get("Pod", "default", "p"))
    assert controller.quiet.known(state.get("ResourceClaim", "default", "p-gpu"))
    assert [o.to_manifest() for o in state.all_objects()] == [
        o.to_manifest() for o in untold.state.all_objects()]
    assert state.events.items == untold.state.events.items


def test_what_pod_bound_remembered_holds_only_while_nothing_is_touched_after_it():
    """What ``pod_bound`` remembered holds only while nothing touches the pod or claim
    before the claim controller's next round: a claim changed meanwhile is visited, and so
    is its pod, whose answer read it."""
    from allocation.engine.claims import ClaimController
    from allocation.engine.manifests import load_texts
    from allocation.engine.state import ClusterState
    from tests.factories import to_yaml

    for touch_after in (False, True):
        state = ClusterState.build(load_texts([("in.yaml", to_yaml(
            BASE + [claim_template("t", params="any"), pod("p", templates={"gpu": "t"})]))]))
        controller = ClaimController()
        assert controller.reconcile(state)  # made p-gpu
        made = state.writable(state.get("ResourceClaim", "default", "p-gpu"))
        p = state.writable(state.get("Pod", "default", "p"))
        made.reserved_for = [{"resource": "pods", "name": "p", "uid": p.meta.uid}]
        controller.pod_bound(state, p, [made.key])
        if touch_after:
            state.writable(made)
        controller.quiet.observe(state)
        assert controller.quiet.known(p) is not touch_after
        assert controller.quiet.known(
            state.get("ResourceClaim", "default", "p-gpu")) is not touch_after


def test_without_a_seed_claim_no_claim_kind_is_walked_and_one_added_later_is_released():
    """The shortcut (no seed claim in the state: a v1 cluster's, whose claims share the
    kind name) asks the memo for no seed claim; a seed claim added later, after rounds
    that touched other objects, is released as by a controller that always looks."""
    from allocation.engine.claims import ClaimController
    from allocation.engine.manifests import load_texts
    from allocation.engine.objects import ResourceClaim
    from allocation.engine.state import ClusterState
    from tests.factories import to_yaml

    state = ClusterState.build(load_texts([("in.yaml", to_yaml(BASE + [pod("a")]))]))
    controller = ClaimController()
    asked = rounds_not_asking(controller, state, ResourceClaim)
    [held] = load_texts([("c.yaml", to_yaml([_allocated(holder="gone")]))]).objects
    state.add(held)
    assert controller.reconcile(state)  # the reservation of a pod that is gone dropped
    assert state.get("ResourceClaim", "default", "c").reserved_for == []
    assert ResourceClaim in asked
