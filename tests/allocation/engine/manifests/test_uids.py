"""allocation.engine.manifests.uids: one uid, one object."""

from __future__ import annotations

from allocation.engine.manifests import load_texts
from allocation.engine.manifests.uids import duplicate_uids
from tests.factories import pod, problems_of, to_yaml


def _with_uid(doc: dict, uid: str) -> dict:
    doc["metadata"]["uid"] = uid
    return doc


def test_a_repeated_uid_is_refused_naming_the_first_holder():
    text = to_yaml([_with_uid(pod("a"), "u-1"), _with_uid(pod("b"), "u-1"), pod("c")])
    assert problems_of(text, "p.yaml") == [
        "p.yaml:2 (Pod default/b): metadata.uid: duplicate uid 'u-1': "
        "Pod default/a at p.yaml:1 has it"]


def test_distinct_uids_and_objects_without_one_load():
    text = to_yaml([_with_uid(pod("a"), "u-1"), _with_uid(pod("b"), "u-2"), pod("c"), pod("d")])
    assert problems_of(text) == []


def test_an_object_may_keep_the_uid_of_the_object_it_replaces():
    stored = load_texts([("s.yaml", to_yaml([_with_uid(pod("a"), "u-1")]))]).objects
    again = load_texts([("w.yaml", to_yaml([_with_uid(pod("a"), "u-1")]))]).objects
    other = load_texts([("w.yaml", to_yaml([_with_uid(pod("z"), "u-1")]))]).objects
    assert duplicate_uids(again, stored) == []
    assert [str(p) for p in duplicate_uids(other, stored)] == [
        "w.yaml:1 (Pod default/z): metadata.uid: duplicate uid 'u-1': "
        "Pod default/a at s.yaml:1 has it"]
