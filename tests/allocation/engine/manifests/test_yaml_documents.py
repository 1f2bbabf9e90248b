"""The YAML builder: no recursion, aliases and keys checked while reading, SafeLoader's values."""

from __future__ import annotations

import datetime

import pytest
import yaml

from allocation.engine.manifests.limits import MAX_NESTING_DEPTH
from allocation.engine.manifests.yaml_documents import iter_yaml_documents
from allocation.engine.manifests.yaml_loader import kube_loader

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"


def _one(text: str):
    [doc] = [d for d in iter_yaml_documents(text) if d.data is not None or d.fatal]
    return doc


@pytest.mark.parametrize("depth", [MAX_NESTING_DEPTH + 1, 1_000, 100_000])
def test_deep_nesting_is_refused_while_reading(depth):
    # 100,000 levels killed the process with SIGSEGV in PyYAML's recursive C composer.
    doc = _one(POD + "spec:\n  x: " + "[" * depth + "]" * depth + "\n")
    assert doc.fatal == (f"lists and objects are nested more than {MAX_NESTING_DEPTH} levels "
                         "deep at line 5")
    assert doc.path.startswith("spec.x[0][0]") and doc.path.endswith("levels more)")
    assert doc.data["metadata"] == {"name": "p"}  # what was read names the object


def test_nesting_up_to_the_bound_is_fine():
    depth = MAX_NESTING_DEPTH - 2  # the document and spec are two levels already
    doc = _one(POD + "spec: " + "[" * depth + "]" * depth + "\n")
    assert doc.fatal is None and doc.problems == []


def test_block_style_nesting_is_counted_too():
    text = POD + "spec:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(80)) + \
        "  " * 81 + "v: 1\n"
    assert "nested more than" in _one(text).fatal


@pytest.mark.parametrize("text", ["status: &a [*a]\n", "status: &a {x: *a}\n",
                                  "status: &a [1, [2, *a]]\n"])
def test_recursive_aliases_are_refused(text):
    doc = _one(POD + text)
    assert doc.fatal.startswith("recursive alias *a at line 4: it stands inside the node")


def test_aliases_expanding_past_4_mib_are_refused():
    # 96 KB of text that expanded to a 92 MB pod before.
    text = POD + "a: &a '" + "x" * 60_000 + "'\nb: [" + ",".join(["*a"] * 100) + "]\n"
    doc = _one(text)
    assert "larger than the 4194304-byte (4 MiB) limit once its aliases are expanded" in \
        doc.fatal


def test_following_documents_are_still_read_after_a_refused_one():
    docs = list(iter_yaml_documents(POD + "status: &a [*a]\n---\n" + POD))
    assert [d.doc for d in docs] == [1, 2] and docs[0].fatal and docs[1].fatal is None


def test_duplicate_keys_are_problems_with_their_line():
    two_nodes = "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n" \
                "apiVersion: v1\nkind: Node\nmetadata:\n  name: b\n"
    doc = _one(two_nodes)
    assert doc.data["metadata"] == {"name": "a"}  # the first stays, to name the object
    assert doc.problems[0] == ("apiVersion", "duplicate key 'apiVersion' at line 5; is a "
                               "'---' missing between two objects?")
    assert [p for p, _ in doc.problems] == ["apiVersion", "kind", "metadata"]


@pytest.mark.parametrize(("key", "shown", "what"), [
    ("5", "5", "an integer (5)"), ("~", "~", "null (~)"),
    ("true", "True", "a boolean (True)"),
    ("[a, b]", "<complex key>", "a list or object"),
])
def test_keys_must_be_strings(key, shown, what):
    doc = _one(POD + f"spec:\n  nodeSelector:\n    ? {key}\n    : x\n")
    assert doc.problems == [(f"spec.nodeSelector.{shown}",
                             f"the key at line 6 is {what}, not a string; quote it")]


def test_integers_beyond_4300_digits_are_a_problem_not_a_crash():
    doc = _one(POD + "spec: {x: " + "9" * 5000 + "}\n")
    assert doc.problems == [("spec.x", "invalid value at line 4: an integer with more than "
                             "4300 digits")]


def test_infinite_numbers_are_refused():
    doc = _one(POD + "spec: {x: .inf}\n")
    assert doc.problems[0][0] == "spec.x" and "infinite" in doc.problems[0][1]


def test_unsupported_tags_are_problems():
    doc = _one(POD + "spec: !!set {a, b}\n")
    assert doc.problems == [("spec", "unsupported YAML tag tag:yaml.org,2002:set at line 4: "
                             "only plain lists and objects are allowed")]


SAMPLE = """
a: yes
b: 0o17
c: 1_000
d: 0x1f
e: 1.5e3
f: ~
g: 2024-01-01T10:00:00Z
h: "quoted: 5"
i: !!str 12
j: &anchor {x: 1, y: [1, 2]}
k: *anchor
l:
  <<: *anchor
  x: 2
m:
  <<: [{p: 1, q: 1}, {p: 2, r: 2}]
n: |
  block
  text
o: -.5
"""


def test_values_are_those_of_pyyaml_safe_loader_but_timestamps_their_text():
    [doc] = list(iter_yaml_documents(SAMPLE))
    assert doc.problems == []
    safe = yaml.safe_load(SAMPLE)
    assert isinstance(safe["g"], datetime.datetime)
    assert doc.data == {**safe, "g": yaml.load(SAMPLE, kube_loader(yaml.SafeLoader))["g"]}
    assert list(doc.data["l"]) == list(safe["l"])
    assert isinstance(doc.data["g"], str)  # as kubectl (go-yaml) reads it


def test_a_timestamp_key_is_a_string_key():
    doc = _one(POD + "spec:\n  nodeSelector:\n    ? 2024-01-01\n    : x\n")
    assert doc.problems == []
    assert doc.data["spec"]["nodeSelector"] == {"2024-01-01": "x"}
