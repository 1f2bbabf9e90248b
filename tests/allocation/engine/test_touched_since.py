"""Reading the keys a state touched since the last look (``engine/touched_since.py``)."""

from __future__ import annotations

from allocation.engine.objects import ObjectKey, Pod
from allocation.engine.state import ClusterState
from allocation.engine.touched_since import TouchedLog, TouchedSince
from tests.factories import pod


def _state(*names: str) -> ClusterState:
    state = ClusterState()
    for name in names:
        state.add(Pod(pod(name)))
    return state


def _key(name: str) -> ObjectKey:
    return ObjectKey("Pod", "default", name)


def _names(keys) -> list[str]:
    return [key.name for key in keys]


def test_a_state_not_seen_is_walked_then_only_what_it_touched_since_is_read():
    state, since = _state("a", "b"), TouchedSince()
    assert since.keys(state) is None  # a first look: the caller walks everything
    assert since.keys(state) == []
    state.writable(state.objects[_key("a")])
    state.add(Pod(pod("c")))
    assert _names(since.keys(state)) == ["a", "c"]
    assert since.keys(_state("a")) is None  # another state (a fork, a full pass)
    assert since.keys(state) is None  # and back: its record since was not followed


def test_the_lists_a_catch_up_put_in_place_are_read_after_the_rest_of_the_last_one():
    """A reader that did not look during a pass still finds what that pass touched."""
    state, since = _state("a"), TouchedSince()
    since.keys(state)
    state.add(Pod(pod("b")))  # after the last look, in the list about to be replaced
    state.touched = TouchedLog([_key("c")], state.touched)
    state.touched.append(_key("d"))  # a pass the reader did not look in
    state.touched = TouchedLog([_key("e")], state.touched)
    assert _names(since.keys(state)) == ["b", "c", "d", "e"]
    state.touched = TouchedLog([], state.touched)
    assert since.keys(state) == []


def test_a_reader_further_behind_than_the_links_kept_walks_everything():
    state, since = _state("a"), TouchedSince()
    since.keys(state)
    first = state.touched
    for _ in range(TouchedLog.LINKS + 1):
        state.touched = TouchedLog([_key("x")], state.touched)
    log, depth = state.touched, 0
    while log is not None and log is not first:
        log, depth = getattr(log, "before", None), depth + 1
    assert log is None and depth <= TouchedLog.LINKS + 1  # old lists are not kept alive
    assert since.keys(state) is None
    assert since.keys(state) == []


def test_a_reader_is_behind_another_state_or_a_new_touched_list_not_new_keys():
    state, since = _state("a"), TouchedSince()
    assert since.behind(state)  # never looked
    since.keys(state)
    state.writable(state.objects[_key("a")])
    assert not since.behind(state)  # new keys in the list it reads: not behind
    state.touched = TouchedLog([], state.touched)  # a new pass's list
    assert since.behind(state)
    since.keys(state)
    assert not since.behind(state) and since.behind(state.fork())
