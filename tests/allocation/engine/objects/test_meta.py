"""Object metadata and copies (``objects/meta.py``): what loading and writing rely on."""

from __future__ import annotations

from collections import OrderedDict

from allocation.engine.objects.meta import ObjectMeta, json_copy, share


def _containers(value, found=None) -> list:
    found = [] if found is None else found
    if isinstance(value, dict | list):
        found.append(value)
        for item in value.values() if isinstance(value, dict) else value:
            _containers(item, found)
    return found


def test_json_copy_is_equal_and_shares_no_list_or_object():
    text = "x" * 100
    source = {
        "a": [1, 2.5, None, True, {"b": [text, {"c": {}}]}],
        "d": {"e": []},
        "t": (1, [2]),
        "o": OrderedDict(f=[3]),
        "s": text,
    }
    copied = json_copy(source)
    assert copied == source
    originals = {id(c) for c in _containers(source)}
    assert not originals & {id(c) for c in _containers(copied)}
    assert type(copied["o"]) is dict  # a subclass becomes plain data, as before
    assert copied["t"] is source["t"] and copied["s"] is source["s"]  # kept, not copied


def test_metadata_owns_its_containers_whether_given_or_not():
    given = {
        "name": "a",
        "labels": {"x": "1"},
        "annotations": {"y": "2"},
        "finalizers": ["f"],
        "ownerReferences": [{"name": "o"}],
    }
    for raw in (given, {"name": "a"}, {"name": "a", "labels": {}, "finalizers": []}):
        first, second = ObjectMeta.from_raw(raw, True), ObjectMeta.from_raw(raw, True)
        for field in ("labels", "annotations", "finalizers", "owner_references"):
            mine, other = getattr(first, field), getattr(second, field)
            assert mine == other and mine is not other
            assert all(mine is not value for value in raw.values())
        assert first.owner_references == list(raw.get("ownerReferences") or [])
        assert all(ref is not given["ownerReferences"][0] for ref in first.owner_references)
    assert ObjectMeta.from_raw({"name": "a"}, True).namespace == "default"
    assert ObjectMeta.from_raw({"name": "a", "namespace": "n"}, False).namespace is None


def test_write_into_sets_what_is_kept_and_drops_what_is_empty():
    meta = ObjectMeta(
        "a",
        "n",
        "u1",
        labels={"x": "1"},
        finalizers=["f"],
        creation_timestamp="2026-01-01T00:00:00Z",
    )
    out = {
        "name": "a",
        "annotations": {"old": "1"},
        "ownerReferences": [{"name": "o"}],
        "deletionTimestamp": "kept",
    }
    meta.write_into(out, share)
    assert out == {
        "name": "a",
        "namespace": "n",
        "uid": "u1",
        "labels": {"x": "1"},
        "finalizers": ["f"],
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "deletionTimestamp": "kept",
    }
    assert out["labels"] is meta.labels
    copied: dict = {}
    meta.write_into(copied)
    assert copied["labels"] == meta.labels and copied["labels"] is not meta.labels


def test_a_key_is_made_once_and_read_from_the_object_after():
    """``KObject.key`` is kept in the object's ``__dict__`` (read there without a call, as a
    settle reads keys many times per pod); a copy made for writing shares it."""
    from allocation.engine.objects import ObjectKey, Pod
    from allocation.engine.objects.clone import clone

    pod = Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}})
    assert "key" not in vars(pod)
    key = pod.key
    assert key == ObjectKey("Pod", "default", "p") and vars(pod)["key"] is key
    assert pod.key is key and clone(pod).key is key
    assert not isinstance(Pod.key, ObjectKey)  # on the class: the descriptor, no error


def test_stable_uid_is_uuid5_of_the_identity():
    """The uid made on the digest's text is ``uuid5``'s, for names giving every variant
    digit (the 17th hex digit takes one of four values from any of sixteen)."""
    import uuid

    from allocation.engine.objects.meta import stable_uid

    namespace = uuid.UUID("6f1c3f7e-4a8e-4d59-9a57-0d1ad3a0c0de")  # fixed: uids stay stable
    variants = set()
    for i in range(200):
        name = f"pod-{i}"
        made = stable_uid("ResourceClaim", "team-a" if i % 2 else None, name)
        expected = str(uuid.uuid5(namespace,
                                  f"ResourceClaim/{'team-a' if i % 2 else ''}/{name}"))
        assert made == expected
        variants.add(made[19])
    assert variants == set("89ab")


def test_a_derived_uid_another_object_was_given_moves_to_the_next_free_one():
    from allocation.engine.objects import Pod
    from allocation.engine.objects.meta import stable_uid, unique_derived_uids

    taken = stable_uid("Pod", "default", "a")
    given = Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "b", "namespace": "default", "uid": taken}})
    derived = Pod({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": "a", "namespace": "default"}})
    other = Pod({"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "c", "namespace": "default"}})
    derived.meta.uid = taken
    other.meta.uid = stable_uid("Pod", "default", "c")
    unique_derived_uids([given, derived, other], [derived, other])
    assert derived.meta.uid == stable_uid("Pod", "default", "a#1")
    assert other.meta.uid == stable_uid("Pod", "default", "c")  # free: kept
    assert given.meta.uid == taken
