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
