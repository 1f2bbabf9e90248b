"""Reading stored rows (allocation/services/store.py): a stored text's document is what
the standard library reads, one shared document per distinct text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.services import store

TEXTS = ['{"x": 18446744073709551616}', '{"x": -9223372036854775809}',
         '{"x": 9223372036854775807, "y": -9223372036854775808}', '{"x": 1e400}',
         '{"a": 1, "a": 2, "b": [1.5, -0.0, 1e-320]}', '[NaN, Infinity]', '"\\ud800"',
         '{"t": "2026-11-27T09:21:44Z", "n": 1234567890123456789012}', "{}", "[]",
         # read as floats by orjson, wherever they are (the walk finds them)
         "18446744073709551616", "-9223372036854775809", "18446744073709551615",
         '{"a": [{"b": [1, 99999999999999999999]}]}', '[1e19, -1e19, 9.2e18, 1.5e300]']

_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
              st.text(alphabet="ab:\\\"é\n\ud7ff", max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(alphabet="ab:", max_size=3), inner,
                                            max_size=3)),
    max_leaves=20)


@pytest.mark.parametrize("text", TEXTS)
def test_a_stored_text_reads_as_the_standard_library_reads_it(text) -> None:
    assert repr(store._parse(text)) == repr(json.loads(text))


@settings(max_examples=300, deadline=None)
@given(_values)
def test_any_json_value_reads_the_same(value) -> None:
    text = json.dumps(value)
    assert repr(store._parse(text)) == repr(json.loads(text))


@pytest.mark.parametrize("text", ['{"a": ', "{'a': 1}", '{"a": 1} x', ""])
def test_a_broken_text_is_the_standard_librarys_error(text) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as raised:
        store._parse(text)
    assert str(raised.value) == str(expected.value)


def test_one_document_per_distinct_text() -> None:
    text = '{"kind": "Node", "metadata": {"name": "shared-text-test"}}'
    first = store._document(text)
    assert store._document("".join(text)) is first  # an equal text, not the same object
    assert store._document(text.replace("shared", "other")) is not first


def test_equal_strings_of_documents_are_one_string() -> None:
    names = ["".join(["team", "-", str(i)]) for i in (1, 1)]
    assert names[0] is not names[1]
    first = store._parse(json.dumps({"metadata": {"namespace": names[0]}, "l": [names[0]]}))
    second = store._parse(json.dumps({"metadata": {"namespace": names[1]}}))
    assert first["metadata"]["namespace"] is second["metadata"]["namespace"]
    assert first["l"][0] is second["metadata"]["namespace"]


@pytest.mark.django_db
def test_rows_with_the_columns_a_build_reads_build_the_same_state_without_a_query(
        django_assert_num_queries) -> None:
    """A vendor object and a row left out among them (its identity read for the problem)."""
    from pathlib import Path

    from allocation import models
    from allocation.engine.events import VirtualClock
    from allocation.services.manifests import import_texts

    root = Path(__file__).resolve().parents[3]
    import_texts([("demo.yaml", (root / "examples" / "demo.yaml").read_text())])
    assert models.VendorObject.objects.exists()
    broken = models.Pod.objects.order_by("position").first()
    models.Pod.objects.filter(pk=broken.pk).update(document='{"kind": "Pod"')
    full, full_left = store.build_state(store.stored_rows(), [], VirtualClock())
    rows = store.state_rows()
    with django_assert_num_queries(0):
        state, left = store.build_state(rows, [], VirtualClock())
        problems = [item.text for item in left]
    assert problems == [item.text for item in full_left] and len(problems) == 1
    assert broken.name in problems[0]
    assert list(state.objects) == list(full.objects)
    assert [o.to_manifest() for o in state.objects.values()] == \
        [o.to_manifest() for o in full.objects.values()]


def _read_together(*documents) -> list:
    """The documents as one batch of stored rows reads them (``build_state``)."""
    with store._batch():
        return [store._parse(json.dumps(d)) for d in documents]


def test_equal_parts_of_documents_read_together_are_one_object() -> None:
    spec = {"containers": [{"name": "main", "resources": {"requests": {"cpu": "1"}}}]}
    first, second = _read_together({"metadata": {"name": "a"}, "spec": spec},
                                    {"metadata": {"name": "b"}, "spec": spec, "l": [spec]})
    assert first["spec"] is second["spec"] and second["l"][0] is not second["spec"]
    assert first["metadata"] is not second["metadata"]
    alone = store._parse(json.dumps({"spec": spec}))  # outside the batch: its own parts
    assert alone["spec"] is not first["spec"] and alone["spec"] == first["spec"]


def test_no_part_is_twice_in_one_document() -> None:
    """Equal parts of one document stay apart (``copy.deepcopy`` keeps a part met twice
    one part, so a change of the copy at one place would show at the other); the second
    is shared with the other documents' second."""
    import copy

    selector = {"cel": {"expression": "true"}}
    doc = {"spec": {"requests": [{"selectors": [selector]}, {"selectors": [selector]}]}}
    first, second = _read_together(doc, doc)
    one, two = first["spec"]["requests"]
    assert one is not two and one == two
    assert one is second["spec"]["requests"][0] and two is second["spec"]["requests"][1]
    edited = copy.deepcopy(first)
    edited["spec"]["requests"][0]["selectors"][0]["cel"]["expression"] = "false"
    assert edited["spec"]["requests"][1] == {"selectors": [selector]}


@pytest.mark.parametrize("pair", [({"a": True}, {"a": 1}), ([1], [1.0]), ([0.0], [-0.0]),
                                  ([None], [[]]), (["x", 1], ["x", "1"]), ({}, []),
                                  ({"a": "b", "c": 1}, {"a": "b", "c": True}),
                                  ([{"a": 1.5}], [{"a": 1.5}]), ([[]], [{}])])
def test_parts_equal_in_python_but_written_differently_are_not_shared(pair) -> None:
    """``True == 1 == 1.0`` and ``0.0 == -0.0`` (a part holding a float is never shared),
    an empty object is not an empty list: each document reads as written."""
    first, second = _read_together({"p": pair[0]}, {"p": pair[1]})
    assert first["p"] is not second["p"]
    assert (json.dumps(first), json.dumps(second)) == (json.dumps({"p": pair[0]}),
                                                       json.dumps({"p": pair[1]}))


def test_objects_of_documents_sharing_parts_see_no_change_of_one_another() -> None:
    """Two pods and two claims whose documents share their statuses' parts: what one
    object changes of its own is seen by neither the other nor the documents."""
    from allocation.engine.manifests import build_object

    pod_status = {"phase": "Pending", "conditions": [{"type": "PodScheduled",
                                                      "status": "True"}],
                  "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "c"}]}
    allocation = {"devices": {"results": [{"request": "gpu", "driver": "d", "pool": "n",
                                           "device": "g"}]},
                  "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                      {"key": "metadata.name", "operator": "In", "values": ["n"]}]}]}}
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "spec": {"devices": {"requests": []}},
             "status": {"allocation": allocation,
                        "reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}}
    docs = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
             "spec": {"containers": []}, "status": pod_status} for i in (1, 2)] + \
        [{**claim, "metadata": {"name": f"c{i}", "namespace": "default"}} for i in (1, 2)]
    read = _read_together(*docs)
    assert read[0]["status"] is read[1]["status"] and read[2]["status"] is read[3]["status"]
    written = json.dumps(read)
    pod1, pod2, claim1, claim2 = (build_object(d) for d in read)
    pod1.set_condition({"type": "PodScheduled", "status": "False"})
    pod1.conditions[0]["reason"] = "x"
    pod1.resource_claim_statuses[0]["resourceClaimName"] = "other"
    claim1.reserved_for.append({"resource": "pods", "name": "q", "uid": "v"})
    claim1.reserved_for[0]["uid"] = "w"
    claim1.allocation["devices"]["results"] = []
    claim1.allocation["nodeSelector"]["nodeSelectorTerms"] = []
    assert json.dumps(read) == written
    assert pod2.to_manifest()["status"] == json.loads(written)[1]["status"]
    assert claim2.to_manifest()["status"] == json.loads(written)[3]["status"]


def test_a_state_built_with_shared_parts_is_the_state_built_without() -> None:
    """``build_state(shared_parts=True)`` reads its rows as one batch (the baseline's
    build); without, each row is read alone (its own parts): the same objects and
    documents."""
    from types import SimpleNamespace

    from allocation.engine.events import VirtualClock

    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"labels": {"zone": "a"}},
            "status": {"allocatable": {"cpu": "8", "pods": "110"}}}
    rows = [SimpleNamespace(position=i + 1, document=json.dumps(
        {**node, "metadata": {**node["metadata"], "name": f"batch-node-{i}"}}),
        namespace="", name=f"batch-node-{i}", KIND="Node") for i in range(3)]
    store._parsed.clear()  # each build parses the texts (one document per distinct text)
    shared, left = store.build_state(rows, [], VirtualClock(), shared_parts=True)
    store._parsed.clear()
    alone, alone_left = store.build_state(rows, [], VirtualClock())
    assert not left and not alone_left
    documents = [o.raw for o in shared.objects.values()]
    assert documents[0]["status"] is documents[1]["status"]
    own = [o.raw for o in alone.objects.values()]
    assert own[0]["status"] is not own[1]["status"]
    assert [o.to_manifest() for o in shared.objects.values()] == \
        [o.to_manifest() for o in alone.objects.values()]
