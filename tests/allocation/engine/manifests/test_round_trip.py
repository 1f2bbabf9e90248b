"""allocation.engine.manifests.round_trip: YAML for people, and field paths to lines."""

from __future__ import annotations

import pytest
import yaml

from allocation.engine.manifests import InvalidManifests, load_texts
from allocation.engine.manifests.round_trip import (
    editable_yaml,
    line_of,
    lines_of,
    merge_document,
    set_values,
)

EDITED = """\
# GPUs of the A100 racks
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu   # the class users name
  annotations:
    example.com/owner: team-a
spec:
  selectors:
  - cel:
      expression: |
        device.driver == "gpu.example.com" &&
          device.attributes["gpu.example.com"].model == "a100"
  - cel: {expression: 'device.driver == "x"'}
"""


def test_editable_yaml_puts_kubernetes_keys_first_and_multiline_strings_in_blocks():
    doc = {"spec": {"selectors": [{"cel": {"expression": "a &&\n  b"}}]},
           "metadata": {"labels": {"x": "1"}, "name": "gpu"}, "kind": "DeviceClass",
           "apiVersion": "resource.k8s.io/v1", "status": {}}

    text = editable_yaml(doc)

    assert text.splitlines() == [
        "apiVersion: resource.k8s.io/v1", "kind: DeviceClass", "metadata:", "  name: gpu",
        "  labels:", "    x: '1'", "spec:", "  selectors:", "  - cel:", "      expression: |-",
        "        a &&", "          b", "status: {}"]
    assert yaml.safe_load(text) == doc


@pytest.mark.parametrize("value", ["trailing space \nx", "\ttab\nx", " lead\nx", "bell\x07\nx",
                                   "two\n\nblank\n\n", "ok\n"])
def test_every_string_reads_back_the_same(value):
    doc = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
           "data": {"v": value}}
    assert yaml.safe_load(editable_yaml(doc)) == doc


@pytest.mark.parametrize(("path", "line"), [
    ("", 2),
    ("metadata.name", 5),
    ("metadata.annotations.example.com/owner", 7),  # a key holding dots
    ("spec.selectors[0].cel.expression", 11),
    ("spec.selectors[1].cel.expression", 14),  # flow style
    ("spec.selectors[1]", 14),
    ("spec.selectors[5].cel", 9),  # no such item: the list's line
    ("spec.selectorz", 8),  # no such key: the deepest part that exists
    ("metadata.labels.app", 4),
])
def test_a_field_path_is_found_at_its_line(path, line):
    assert line_of(EDITED, path) == line


def test_paths_of_a_later_document_and_unreadable_text():
    text = "kind: A\n---\nkind: B\nspec:\n  x: 1\n"
    assert lines_of(text, ["spec.x", "kind"], doc=2) == [5, 3]
    assert line_of(text, "spec.x", doc=3) is None
    assert line_of("a: [1\nb: 2\n", "a") is None


@pytest.mark.parametrize(("change", "path", "line"), [
    (("  name: gpu", "  nme: gpu"), "metadata.nme", 5),
    (("  name: gpu", "  nme: gpu"), "metadata.name", 4),  # missing: at metadata
    (("model ==", "model ==  =="), "spec.selectors[0].cel.expression", 11),
    (("owner: team-a", "owner: [1]"), "metadata.annotations.example.com/owner", 7),
])
def test_the_loaders_problem_paths_land_on_the_lines_that_hold_them(change, path, line):
    text = EDITED.replace(*change)
    with pytest.raises(InvalidManifests) as caught:
        load_texts([("e.yaml", text)])
    found = {p.path: line_of(text, p.path) for p in caught.value.problems}
    assert found[path] == line


def test_merge_keeps_comments_order_and_style_and_takes_the_new_values():
    new = yaml.safe_load(EDITED)
    new["metadata"]["labels"] = {"tier": "gold"}
    new["spec"]["selectors"][1]["cel"]["expression"] = 'device.driver == "y"'
    del new["metadata"]["annotations"]

    merged = merge_document(EDITED, new)

    assert yaml.safe_load(merged) == new
    assert merged.startswith("# GPUs of the A100 racks\napiVersion: resource.k8s.io/v1\n")
    assert "  name: gpu   # the class users name\n" in merged
    assert "      expression: |\n        device.driver ==" in merged
    assert "- cel: {expression: 'device.driver == \"y\"'}" in merged
    assert "labels:\n    tier: gold" in merged and "owner" not in merged


def test_merge_into_text_that_is_not_a_mapping_writes_it_afresh():
    doc = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}
    assert merge_document("- a\n", doc) == editable_yaml(doc)
    assert merge_document("a: [", doc) == editable_yaml(doc)


def test_set_values_changes_only_the_named_fields():
    text = set_values(EDITED, {"spec.selectors[0].cel.expression": "a ||\n  b",
                               "spec.selectors[1].cel.expression": "c ||\n  d"})

    assert text.startswith("# GPUs of the A100 racks\n")
    assert "      expression: |-\n        a ||\n          b\n" in text
    assert "  - cel: {expression: \"c ||\\n  d\"}\n" in text  # flow style stays flow
    assert yaml.safe_load(text)["spec"]["selectors"][1]["cel"]["expression"] == "c ||\n  d"
    with pytest.raises(KeyError, match="spec.selectors.3..cel"):
        set_values(EDITED, {"spec.selectors[3].cel": "x"})
    with pytest.raises(ValueError):
        set_values("- a\n", {"a": "b"})


def test_a_key_merged_in_by_a_merge_key_is_placed_at_the_mapping():
    # ``<<`` keys have no line of their own in the round-trip tree: the mapping's is used
    text = "kind: Node\nmetadata:\n  <<: {a: 1}\n  name: n\n"
    assert lines_of(text, ["metadata.a", "metadata.name", "metadata.a.b"]) == [2, 4, 2]


DEEP = 5000  # past Python's recursion limit, and seconds for ruamel's scanner uncut


def test_a_text_nested_past_the_loaders_bound_is_read_up_to_it():
    text = "kind: Node\nmetadata: {name: n}\nzz: " + "[" * DEEP + "]" * DEEP + "\nyy: 1\n"
    # the loader refuses it at level 65; its lines are found up to there (the rest of the
    # document is cut, flow_depth.py: a later key is not found, the document's first line)
    assert lines_of(text, ["zz" + "[0]" * 70, "yy"]) == [3, 1]
    block = "zz:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(DEEP)) + "yy: 1\n"
    assert lines_of(block, ["yy"]) == [None]  # too deep for ruamel's recursion: no line


def test_a_text_nested_too_deep_is_not_merged_into_or_edited():
    doc = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}
    flow = "kind: Node\nzz: " + "[" * DEEP + "]" * DEEP + "\n"
    block = "zz:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(DEEP)) + "yy: 1\n"
    for text in (flow, block):
        assert merge_document(text, doc) == editable_yaml(doc)
        with pytest.raises(ValueError, match="^nested more than 64 levels deep$"):
            set_values(text, {"kind": "Pod"})
