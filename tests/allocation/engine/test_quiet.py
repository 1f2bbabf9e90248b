from __future__ import annotations

from allocation.engine.manifests import load_texts
from allocation.engine.objects import ObjectKey
from allocation.engine.quiet import Quiet
from allocation.engine.state import ClusterState
from tests.factories import node, pod, to_yaml


def _state() -> ClusterState:
    docs = [node("n0"), pod("a", node_name="n0"), pod("b", node_name="n0")]
    return ClusterState.build(load_texts([("c.yaml", to_yaml(docs))]))


def test_a_change_to_a_dependency_forgets_the_answer():
    state = _state()
    quiet = Quiet()
    quiet.observe(state)
    a = state.get("Pod", "default", "a")
    quiet.remember(a, [ObjectKey("Pod", "default", "b")])
    assert quiet.known(a)
    state.writable(state.get("Pod", "default", "b"))
    quiet.observe(state)
    assert not quiet.known(a)


def test_a_fork_keeps_what_was_quiet_and_forgets_on_its_own_changes_only():
    state = _state()
    quiet = Quiet()
    quiet.observe(state)
    a, b = state.get("Pod", "default", "a"), state.get("Pod", "default", "b")
    quiet.remember(a, [b.key])
    quiet.remember(b, [])
    fork = state.fork()
    twin = quiet.fork_for(fork)
    twin.observe(fork)
    assert twin.known(fork.get("Pod", "default", "a")) and twin.known(b)
    fork.writable(fork.get("Pod", "default", "b"))
    twin.observe(fork)
    assert not twin.known(fork.get("Pod", "default", "a"))
    quiet.observe(state)
    assert quiet.known(a) and quiet.known(b)  # the parent's memo is its own


def test_a_fork_sees_what_its_parent_touched_before_the_fork():
    state = _state()
    quiet = Quiet()
    quiet.observe(state)
    a = state.get("Pod", "default", "a")
    quiet.remember(a, [ObjectKey("Pod", "default", "b")])
    state.writable(state.get("Pod", "default", "b"))  # not observed yet
    fork = state.fork()
    twin = quiet.fork_for(fork)
    twin.observe(fork)
    assert not twin.known(fork.get("Pod", "default", "a"))


def test_unknown_keeps_order_and_a_new_object_at_a_known_key_is_unknown():
    state = _state()
    quiet = Quiet()
    quiet.observe(state)
    a, b = state.get("Pod", "default", "a"), state.get("Pod", "default", "b")
    quiet.remember(b, [])
    assert quiet.unknown([a, b]) == [a]
    copy = load_texts([("c.yaml", to_yaml([pod("b", node_name="n0")]))]).objects[0]
    assert copy.key == b.key and not quiet.known(copy)  # same key, another object
    quiet.remember(copy, [])
    assert quiet.known(copy) and not quiet.known(b)  # the newer answer replaces the older
    quiet.remember(copy, [a.key])
    state.writable(a)
    quiet.observe(state)
    assert quiet.unknown([a, b, copy]) == [a, b, copy]


def _random_change(state, quiet: Quiet, rng, action: str, serial: int) -> int:
    """One random ``action`` on ``state`` and ``quiet`` (a pod added when there is none);
    the serial of the names made so far."""
    from allocation.engine.manifests import build_object
    from allocation.engine.objects import Node

    pods = list(state.pods())
    if action == "add" or not pods:
        serial += 1
        state.add(build_object(pod(f"new{serial}")))
    elif action == "remove":
        state.remove(rng.choice(pods))
    elif action == "touch":
        state.writable(rng.choice(pods))
    elif action == "remember":
        quiet.remember(rng.choice(pods), [rng.choice(pods).key])
    elif action == "after":
        target = state.writable(rng.choice(pods))
        quiet.remember_after(state, target, [rng.choice(pods).key])
    elif action == "replace":  # removed and added again: it goes last
        gone = rng.choice(pods)
        state.remove(gone)
        state.add(build_object(pod(gone.name)))
    elif action == "node":
        serial += 1
        state.add(build_object(node(f"m{serial}")), index=False)
    elif action == "touch-node":
        state.writable(rng.choice(list(state.of_kind(Node))))
    else:
        quiet.observe(state)
    return serial


def test_unknown_of_equals_unknown_of_every_object_after_random_changes():
    """``unknown_of`` (the objects that may be unknown, after one walk) gives what
    ``unknown`` of the whole kind gives, in the same order, whatever was added, removed,
    changed, remembered or forgotten since."""
    import random

    from allocation.engine.objects import Node, Pod

    rng = random.Random(3)
    for _trial in range(30):
        state = _state()
        quiet = Quiet()
        quiet.observe(state)
        serial = 0
        for _step in range(25):
            action = rng.choice(["add", "remove", "touch", "remember", "remember", "observe",
                                 "replace", "node"])
            serial = _random_change(state, quiet, rng, action, serial)
            for cls in (Pod, Node):
                assert quiet.unknown_of(state, cls) == quiet.unknown(state.of_kind(cls))


def test_a_fork_and_its_parent_share_dependencies_without_seeing_each_others_answers():
    """fork_for shares the dependency sets: a memo copies one before it first adds to it,
    so an answer remembered on either side after the fork never makes the other forget."""
    state = _state()
    quiet = Quiet()
    quiet.observe(state)
    a, b = state.get("Pod", "default", "a"), state.get("Pod", "default", "b")
    quiet.remember(a, [])  # the sets of a and b, each holding itself, are then shared
    quiet.remember(b, [])
    fork = state.fork()
    twin = quiet.fork_for(fork)
    twin.observe(fork)
    quiet.remember(b, [a.key])  # the parent: b depends on a as well
    twin.remember(a, [b.key])  # the fork: a depends on b as well
    fork.writable(fork.get("Pod", "default", "a"))
    twin.observe(fork)
    assert twin.known(b)  # the parent's answer for b is not the fork's
    state.writable(b)
    quiet.observe(state)
    assert quiet.known(a) and not quiet.known(b)  # nor the fork's for a the parent's


def test_remember_after_is_known_from_the_next_observe_despite_the_touches_before_it():
    state = _state()
    quiet = Quiet()
    quiet.observe(state)
    a, b = state.get("Pod", "default", "a"), state.get("Pod", "default", "b")
    state.writable(a)  # the changes that made the answer true come first
    state.writable(b)
    quiet.remember_after(state, a, [b.key])
    assert not quiet.known(a)  # not in the pass that gave the answer
    quiet.observe(state)
    assert quiet.known(a)
    state.writable(b)
    quiet.observe(state)
    assert not quiet.known(a)  # as remember's answers, from then on


def test_remember_after_forgets_what_is_touched_after_the_answer():
    for touch in ("a", "b"):
        state = _state()
        quiet = Quiet()
        quiet.observe(state)
        a, b = state.get("Pod", "default", "a"), state.get("Pod", "default", "b")
        quiet.remember_after(state, a, [b.key])
        state.writable(state.get("Pod", "default", touch))
        quiet.observe(state)
        assert not quiet.known(a), touch


def test_remember_after_drops_answers_of_a_replaced_list_and_carries_them_to_a_fork():
    state = _state()
    quiet = Quiet()
    quiet.observe(state)
    a = state.get("Pod", "default", "a")
    quiet.remember_after(state, a, [])
    state.touched = list(state.touched)  # the worker's catch-up: a new list
    quiet.observe(state)
    assert not quiet.known(a)
    quiet.remember_after(state, a, [])
    fork = state.fork()
    twin = quiet.fork_for(fork)
    twin.observe(fork)
    assert twin.known(fork.get("Pod", "default", "a"))  # the parent's answer, carried
    assert quiet.known(a)


class _Reads(list):
    """A ``touched`` list that counts the slices read of it."""

    slices = 0

    def __getitem__(self, index):
        if isinstance(index, slice):
            type(self).slices += 1
        return super().__getitem__(index)


def test_observe_reads_the_touched_keys_only_when_an_answer_depends_on_some():
    """A memo with no answer (its first round, or after a round that remembered nothing)
    does not read what a large state touched; with answers it reads the new keys, and
    forgets what depends on them."""
    state = _state()
    state.touched = _Reads(state.touched)
    quiet = Quiet()
    quiet.observe(state)
    state.writable(state.get("Pod", "default", "b"))
    quiet.observe(state)
    assert _Reads.slices == 0
    a = state.get("Pod", "default", "a")
    quiet.remember(a, [ObjectKey("Pod", "default", "b")])
    state.writable(state.get("Pod", "default", "b"))
    quiet.observe(state)
    assert _Reads.slices == 1 and not quiet.known(a)


def test_unknown_of_gathers_only_keys_of_the_kinds_walked_and_stays_exact():
    """After a walk of pods, the keys of other kinds touched (claims, nodes) are not gathered
    (a key's kind is its class's), nor are the pods ``remember_after`` made known at the
    next observe; a union or a class whose objects take their kind from their document
    gathers what it may need. Through random changes, answers given after the changes
    that made them true among them, ``unknown_of`` gives what ``unknown`` of the whole kind
    gives."""
    import random

    from allocation.engine.objects import KObject, Node, Pod

    state = _state()
    quiet = Quiet()
    quiet.observe(state)
    assert len(quiet.unknown_of(state, Pod)) == 2
    a = state.get("Pod", "default", "a")
    state.writable(state.nodes["n0"])
    state.writable(a)
    quiet.remember_after(state, a, [])
    quiet.observe(state)
    quiet._gather(state)  # what the next walk would look at: no node, no pod known now
    assert quiet.known(a) and quiet._maybe == {ObjectKey("Pod", "default", "b")}
    rng = random.Random(5)
    for kinds in ((Pod,), (Pod | Node,), (Pod, KObject)):
        state = _state()
        quiet = Quiet()
        quiet.observe(state)
        serial = 0
        for _step in range(60):
            action = rng.choice(["add", "remove", "touch", "remember", "after", "observe",
                                 "node", "touch-node"])
            serial = _random_change(state, quiet, rng, action, serial)
            for cls in kinds:
                assert quiet.unknown_of(state, cls) == quiet.unknown(state.of_kind(cls))


def test_an_answer_depends_on_its_own_object_without_a_dependency_set():
    """``remember`` enters only the dependencies given in ``_deps`` (no set per answer for
    the object's own key); a touch of the object still forgets its answer, in a fork too."""
    state = _state()
    quiet = Quiet()
    quiet.observe(state)
    a, b = state.get("Pod", "default", "a"), state.get("Pod", "default", "b")
    quiet.remember(a, [b.key])
    quiet.remember(b, [])
    quiet.observe(state)  # (the dependencies are filed there)
    assert quiet._deps == {b.key: {a.key}}
    fork = state.fork()
    twin = quiet.fork_for(fork)
    state.writable(a)
    quiet.observe(state)
    assert not quiet.known(a) and quiet.known(b)
    fork.writable(fork.get("Pod", "default", "b"))
    twin.observe(fork)
    assert not twin.known(a) and not twin.known(b)


def test_dependencies_are_filed_at_the_next_observe_and_forget_as_before():
    """``remember`` files an answer's dependencies at the next ``observe``, before that
    reads what was touched (a settle's last round files nothing): a dependency touched
    after the answer was given, or before it within the same round, still forgets it."""
    state = _state()
    quiet = Quiet()
    quiet.observe(state)
    a, b = state.get("Pod", "default", "a"), state.get("Pod", "default", "b")
    quiet.remember(a, [b.key])
    assert quiet._deps == {} and quiet.known(a)  # known at once, its dependency not filed
    state.writable(b)  # touched after the answer, before the next look
    quiet.observe(state)
    assert not quiet.known(a) and quiet._deps == {}

    state.writable(b)  # touched before the answer, within one round
    a = state.get("Pod", "default", "a")
    quiet.remember(a, [b.key])
    quiet.observe(state)
    assert not quiet.known(a)

    quiet.remember(a, [b.key])  # untouched: it stays known, its dependency filed
    quiet.observe(state)
    assert quiet.known(a) and quiet._deps == {b.key: {a.key}}
