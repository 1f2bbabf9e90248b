"""Reading YAML safely: size limits, alias bombs, broken syntax."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine.manifests import reader
from allocation.engine.manifests.reader import MAX_DOCUMENT_BYTES, read_json_value, read_text
from allocation.engine.manifests.yaml_documents import iter_yaml_documents
from tests.factories import problems_of

BOMB = """
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def test_alias_bomb_is_refused_with_a_clear_message():
    [doc] = read_text(BOMB)
    assert doc.data is None and "once its aliases are expanded" in doc.error
    [line] = problems_of(BOMB)
    assert line.startswith("bad.yaml:1 (<no kind> <unnamed>): g[0]: the document holds more "
                           "than 1000000 values once its aliases are expanded")


def test_modest_aliases_are_fine():
    [doc] = read_text("a: &x {k: v}\nb: *x\n")
    assert doc.data == {"a": {"k": "v"}, "b": {"k": "v"}}


def test_oversized_document_is_refused():
    big = "kind: Node\nnote: " + "x" * (MAX_DOCUMENT_BYTES + 10) + "\n"
    [doc] = read_text(big)
    assert doc.error and "4 MiB" in doc.error


def test_broken_yaml_names_the_document():
    lines = problems_of("apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\nkey: [unclosed\n")
    assert lines[-1].startswith("bad.yaml:2 ") and "invalid YAML" in lines[-1]


def test_empty_documents_are_skipped_but_counted():
    docs = read_text("---\n---\nkind: A\n")
    assert [(d.doc, d.data) for d in docs] == [(3, {"kind": "A"})] or \
        [d.data for d in docs] == [{"kind": "A"}]


# -- JSON ----------------------------------------------------------------------------------
JSON_POD = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": %s}'


def test_json_nested_deeper_than_the_bound_is_refused_without_recursion_error():
    for depth in (100, 1_000, 100_000):
        [doc] = read_text(JSON_POD % ("[" * depth + "]" * depth), json_hint=True)
        assert doc.error == "lists and objects are nested more than 64 levels deep"
        assert doc.hint == {"kind": "Pod", "name": "p"}


def test_json_duplicate_keys_are_problems_at_their_field():
    [doc] = read_text('{"kind": "Node", "metadata": {"name": "a", "name": "b"}}')
    assert doc.problems == [("metadata.name",
                             "duplicate key 'name'; the last value would win silently")]


def test_json_numbers_out_of_range():
    [doc] = read_text(JSON_POD % ('{"x": ' + "9" * 5000 + "}"), json_hint=True)
    assert doc.error == "invalid JSON: an integer with more than 4300 digits"
    [doc] = read_text(JSON_POD % '{"x": 1e309}', json_hint=True)
    assert doc.error == "a number out of range (beyond the largest float)"
    assert doc.path == "spec.x"
    [doc] = read_text(JSON_POD % '{"x": NaN}', json_hint=True)
    assert doc.error.startswith("NaN is not a JSON number")


def test_json_document_over_4_mib_is_refused_but_a_large_list_is_not():
    big = JSON_POD % ('{"note": "' + "x" * MAX_DOCUMENT_BYTES + '"}')
    [doc] = read_text(big, json_hint=True)
    assert "larger than the 4194304-byte (4 MiB) limit" in doc.error
    items = ", ".join(json.dumps({"apiVersion": "v1", "kind": "Node",
                                  "metadata": {"name": f"n{i}"}, "x": "y" * 100_000})
                      for i in range(50))
    many = '{"apiVersion": "v1", "kind": "List", "items": [' + items + "]}"
    [doc] = read_text(many, json_hint=True)
    assert doc.error is None and len(doc.data["items"]) == 50


def test_syntax_errors_are_one_line_with_position():
    [doc] = read_text("kind: Pod\nspec:\n  x: [a, b\n  y: 1\n")
    assert "\n" not in doc.error and "<unicode string>" not in doc.error
    assert doc.error.startswith("invalid YAML at line 4, column 4: did not find expected ','")
    [doc] = read_text('{"kind": "Pod",\n "x": }', json_hint=True)
    assert doc.error == "invalid JSON at line 2, column 7: Expecting value"


def test_a_syntax_error_names_the_object_from_its_metadata_lines():
    # the name and namespace at metadata's first indentation, past a long labels block
    # (a pattern over the lines backtracked exponentially there: 16 labels took minutes)
    labels = "".join(f"    example.com/label-{i}: v\n" for i in range(40))
    text = (f"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  labels:\n"
            f"{labels}    name: not-this\n  name: 'gpu'\nspec:\n  config: [\n")
    [doc] = read_text(text)
    assert doc.error.startswith("invalid YAML")
    assert doc.hint == {"kind": "DeviceClass", "name": "gpu"}
    claim = text.replace("DeviceClass", "ResourceClaim").replace(
        "  name: 'gpu'", "  name: gpu\n  namespace: team").replace("\n", "\r\n")
    [line] = problems_of(claim)
    assert line.startswith("bad.yaml:1 (ResourceClaim team/gpu): ")


def test_a_key_with_a_line_break_keeps_its_problem_on_one_line():
    lines = problems_of('apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"a\\nb": 1\n'
                        'spec: {"x\\u2028y": 1}\n')
    assert lines == [] or all("\n" not in line and "\u2028" not in line for line in lines)
    [line] = problems_of('apiVersion: resource.k8s.io/v1alpha2\nkind: ResourceClass\n'
                         'metadata: {name: c}\ndriverName: d.example.com\n'
                         'structuredParameters: true\n"a\\nb": 1\n')
    assert line.endswith(": a\\nb: unknown field")


_json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False,
              allow_infinity=False), st.text(alphabet="ab:\\\"é\n", max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(alphabet="ab:", max_size=3), inner,
                                            max_size=3)),
    max_leaves=20)


@settings(max_examples=500, deadline=None)
@given(_json_values, st.booleans())
def test_json_through_orjson_reads_what_the_standard_library_reads(value, duplicate):
    """orjson's value is used only when it is the standard library's and nothing is to be
    reported (no duplicate key); everything else goes the standard library's way."""
    text = json.dumps(value, ensure_ascii=False)
    if duplicate and text.startswith("{") and len(text) > 2:
        text = '{"a": 1, "a": 2, ' + text[1:]  # a key given twice
    fast = reader._read_json_fast(text)
    expected = json.loads(text)
    if fast is not reader._SLOW:
        assert repr(fast) == repr(expected)
        assert read_json_value(text) == (expected, [])
    if '"a": 1, "a": 2' in text:
        assert fast is reader._SLOW
        assert read_json_value(text)[1]


def test_json_fast_path_is_taken_for_plain_manifests():
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"kind": "Node", "metadata": {"name": "n", "labels": {"a": "b"}}, "n": 2**63}]})
    assert reader._read_json_fast(text) == json.loads(text)
    assert reader._read_json_fast('{"x": 18446744073709551616}') is reader._SLOW
    assert reader._read_json_fast('{"x": "a:b"}') is reader._SLOW


@pytest.mark.parametrize("text, over", [("\u00e9" * 800_000, True), ("\x7f" * 700_000, True),
                                        ("\u00e9" * 698_000, False), ("x" * 1_000_000, False)])
def test_a_list_item_is_sized_as_ascii_json(text, over):
    # The limit applies to an item as json.dumps writes it (non-ASCII escaped); orjson's
    # UTF-8 text only rules out items far below it.
    item = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "x": text}
    filler = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "m"},
              "x": "y" * 3_500_000}
    many = json.dumps({"apiVersion": "v1", "kind": "List", "items": [filler, item]},
                      ensure_ascii=False)
    [doc] = read_text(many, json_hint=True)
    size = len(json.dumps(item, separators=(",", ":")))
    assert (size > MAX_DOCUMENT_BYTES) == over
    if over:
        assert doc.error == (f"items[1] is {size} bytes, larger than the 4194304-byte "
                             "(4 MiB) limit") and doc.path == "items[1]"
    else:
        assert doc.error is None


def test_a_timestamp_is_read_as_its_text_as_kubectl_reads_it():
    # go-yaml gives an untyped timestamp-like value as a string: a value passed through
    # (an Event's lastTimestamp, opaque parameters) is written back as it was
    text = "kind: Event\nlastTimestamp: 2025-01-01T00:00:00Z\nparameters: {since: 2025-01-01}\n"
    for fast in (True, False):  # the line reader and libyaml
        [doc] = iter_yaml_documents(text, fast=fast)
        assert doc.data["lastTimestamp"] == "2025-01-01T00:00:00Z"
        assert doc.data["parameters"] == {"since": "2025-01-01"}


def test_a_lone_surrogate_escape_in_json_is_the_replacement_character():
    # as Go's encoding/json; a pair is one character (orjson refuses the lone one)
    [doc] = read_text('{"kind": "Event", "message": "a\\ud800b", "k\\udc00": "\\ud83d\\ude00"}',
                      json_hint=True)
    assert doc.data == {"kind": "Event", "message": "a\ufffdb", "k\ufffd": "\U0001F600"}
    # a key given twice is still found, and named without the surrogate
    value, problems = read_json_value('{"m\\ud800": {"a": 1, "a": 2}}')
    assert value == {"m\ufffd": {"a": 2}}
    assert [path for path, _ in problems] == ["m\ufffd.a"]
