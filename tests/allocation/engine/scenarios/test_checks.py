"""The whole-cluster checks of a fork, judged on what changed, answer as over every object
(allocation/engine/scenarios/checks.py)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from allocation.engine.changes import apply_changes
from allocation.engine.events import DEFAULT_START
from allocation.engine.input_status import check_input
from allocation.engine.manifests import load_documents
from allocation.engine.objects import ObjectKey
from allocation.engine.scenarios import checks
from allocation.engine.scenarios.checks import (
    base_passes,
    carried_passes,
    check_fork_input,
    fork_passes,
    passes,
)
from allocation.engine.simulation import simulate
from tests.factories import claim, node, pod, resource_class

ROOT = Path(__file__).resolve().parents[4]

SEED_TEMPLATE = {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimTemplate",
                 "metadata": {"name": "seed-gpu", "namespace": "default", "uid": "seed-uid"},
                 "spec": {"spec": {"resourceClassName": "gpu"}}}


def _base():
    documents = [d for d in yaml.safe_load_all((ROOT / "examples" / "v1-gpus.yaml")
                                               .read_text()) if d]
    return documents, simulate(load_documents(("baseline", d) for d in
                                              [*documents, SEED_TEMPLATE]), now=DEFAULT_START)


def _pod(name: str, claims: list[dict], uid: str | None = None) -> dict:
    metadata = {"name": name, "namespace": "default"} | ({"uid": uid} if uid else {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"containers": [{"name": "main", "image": "x"}], "resourceClaims": claims}}


def _judged(base, documents: list[dict], remove=()) -> tuple[bool, bool]:
    """(fork_passes, passes over every object) of ``base`` forked with ``documents`` put in
    and the objects keyed ``remove`` taken out."""
    fresh = load_documents(("scenario", d) for d in documents).objects
    fork = base.state.fork()
    gone = [k for k in remove if k not in {o.key for o in fresh}]
    assert apply_changes(fork, gone, fresh)
    return (fork_passes(base.state, fork, fresh, gone),
            passes(list(fork.objects.values())))


def test_the_baseline_passes():
    _documents, base = _base()
    assert base_passes(base.state)


@pytest.mark.parametrize(("pod", "expected"), [
    (_pod("ok", [{"name": "gpu", "resourceClaimTemplateName": "whole-gpu"}]), True),
    (_pod("mixed", [{"name": "a", "resourceClaimTemplateName": "whole-gpu"},
                    {"name": "b", "resourceClaimTemplateName": "seed-gpu"}]), False),
])
def test_a_changed_pod_is_judged_as_over_every_object(pod, expected):
    _documents, base = _base()
    assert _judged(base, [pod]) == (expected, expected)


def test_a_uid_an_unchanged_object_has_is_refused():
    _documents, base = _base()
    assert _judged(base, [_pod("twin", [], uid="seed-uid")]) == (False, False)
    assert _judged(base, [_pod("own", [], uid="own-uid")]) == (True, True)


def test_a_changed_claim_template_of_another_dialect_checks_every_pod():
    documents, base = _base()
    seed = copy.deepcopy(SEED_TEMPLATE)
    seed["metadata"] = {"name": "whole-gpu", "namespace": "default"}  # train-1 uses it: now seed
    pod = _pod("mixed", [{"name": "a", "resourceClaimTemplateName": "whole-gpu"},
                         {"name": "b", "resourceClaimTemplateName": "half-gpu"}])
    assert _judged(base, [pod]) == (True, True)
    key = next(k for k in base.state.objects if k.kind == "ResourceClaimTemplate"
               and k.name == "whole-gpu")
    assert _judged(base, [pod, seed], remove=[key]) == (False, False)


def test_a_new_claim_of_another_dialect_checks_the_pods_naming_it():
    """An unchanged pod naming a claim that did not exist mixes dialects once a seed claim
    of that name comes; a PodTemplate naming it has every object checked."""
    documents = [d for d in yaml.safe_load_all((ROOT / "examples" / "v1-gpus.yaml")
                                               .read_text()) if d]
    waiting = _pod("waiting", [{"name": "a", "resourceClaimTemplateName": "whole-gpu"},
                               {"name": "b", "resourceClaimName": "later"}])
    base = simulate(load_documents(("baseline", d) for d in [*documents, waiting]),
                    now=DEFAULT_START)
    assert base_passes(base.state)
    assert _judged(base, [claim("later")]) == (False, False)
    template = {"apiVersion": "v1", "kind": "PodTemplate",
                "metadata": {"name": "pt", "namespace": "default"},
                "template": {"spec": {"containers": [{"name": "c", "image": "x"}],
                                      "resourceClaims": [
                                          {"name": "a", "resourceClaimName": "later"}]}}}
    base = simulate(load_documents(("baseline", d) for d in [*documents, template]),
                    now=DEFAULT_START)
    assert base_passes(base.state)
    assert _judged(base, [claim("later")]) == (True, True)


def _input_base():
    documents = [resource_class(), node("n0"), node("n1"), pod("a", node_name="n0"),
                 pod("b", node_name="n1"), claim("c")]
    return simulate(load_documents(("baseline", d) for d in documents), now=DEFAULT_START)


def _input_judged(base, documents: list[dict], remove=()) -> tuple[bool, bool]:
    """(check_fork_input found a problem, check_input of every object found one) in
    ``base`` forked with ``documents`` put in and the objects keyed ``remove`` taken out."""
    fresh = load_documents(("scenario", d) for d in documents).objects
    fork = base.state.fork()
    gone = [k for k in remove if k not in {o.key for o in fresh}]
    apply_changes(fork, gone, fresh)  # False for a pod bound to a missing node: judged here
    before = len(fork.problems)
    check_fork_input(base.state, fork, fresh, gone)
    found = len(fork.problems) > before
    del fork.problems[before:]
    check_input(fork)
    return found, len(fork.problems) > before


@pytest.mark.parametrize(("documents", "remove", "expected"), [
    ([pod("a", node_name="n1")], (), False),
    ([pod("new", node_name="gone")], (), True),  # a changed pod bound to a missing node
    ([claim("c", status={"reservedFor": [{"resource": "pods", "name": "a"}]})], (), True),
    ([], [ObjectKey("Node", None, "n1")], True),  # b, unchanged, loses its node
    ([], [ObjectKey("Pod", "default", "b")], False),
])
def test_the_fork_input_check_answers_as_over_every_object(documents, remove, expected):
    base = _input_base()
    assert _input_judged(base, documents, remove) == (expected, expected)


def _first(state, kind: str) -> ObjectKey:
    return next(k for k in state.objects if k.kind == kind)


@pytest.mark.parametrize(("documents", "remove"), [
    ([_pod("ok", [{"name": "gpu", "resourceClaimTemplateName": "whole-gpu"}])], ()),
    ([_pod("mixed", [{"name": "a", "resourceClaimTemplateName": "whole-gpu"},
                     {"name": "b", "resourceClaimTemplateName": "seed-gpu"}])], ()),
    ([_pod("twin", [], uid="seed-uid")], ()),
    ([_pod("own", [], uid="own-uid")], ("Pod",)),
    ([], ("ResourceClaimTemplate",)),
    ([], ("Node",)),
    ([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "extra"}}], ()),
])
def test_checks_carried_to_a_changed_fork_are_the_checks_made_afresh(documents, remove):
    """A baseline caught up from the change log (a fork of the last one that took changes
    and settled) gets its checks and their indexes from the last one's."""
    _documents, base = _base()
    assert base_passes(base.state)
    fresh = load_documents(("stored", d) for d in documents).objects
    fork = base.state.fork()
    apply_changes(fork, [_first(base.state, kind) for kind in remove], fresh)
    again = fork.fork()  # the same objects, nothing carried over
    assert carried_passes(base.state, fork) == base_passes(again)
    namespaces, uids = checks._index(fork)
    expected_namespaces, expected_uids = checks._index(again)
    assert sorted(namespaces) == sorted(expected_namespaces)
    assert {u: sorted(k) for u, k in uids.items()} == {
        u: sorted(k) for u, k in expected_uids.items()}
    assert checks._input_passes(fork) == checks._input_passes(again)
