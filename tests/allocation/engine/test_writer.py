"""Deterministic YAML/JSON writing that YAML readers read back unchanged."""

from __future__ import annotations

import json

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine.writer import dump, to_yaml

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                    st.floats(allow_nan=False, allow_infinity=False, width=32),
                    st.text(max_size=20))
data = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=8), data, max_size=5))
def test_yaml_round_trips(document):
    assert yaml.safe_load(to_yaml(document)) == (document or None) or document == {}


def test_tricky_strings_are_quoted():
    doc = {"a": "yes", "b": "1.5", "c": "~", "d": "x: y", "e": "- x", "f": "#c", "g": "",
           "h": "2025-01-01", "i": "0x1F", "j": "null", "k": " lead", "l": "multi\nline"}
    assert yaml.safe_load(to_yaml(doc)) == doc


def test_output_is_sorted_and_stable():
    doc = {"b": [{"z": 1, "a": 2}], "a": "x"}
    text = dump(doc)
    assert text == "a: x\nb:\n- a: 2\n  z: 1\n"
    assert dump(doc, "json") == json.dumps(doc, indent=2, sort_keys=True) + "\n"
