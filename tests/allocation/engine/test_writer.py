"""Deterministic YAML/JSON writing that YAML readers read back unchanged."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from unittest.mock import patch

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine.writer import as_list, dump, dump_list_to, dump_to, to_json, to_yaml

ROOT = Path(__file__).resolve().parents[3]

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


def test_a_quoted_string_is_the_standard_librarys_text_for_every_code_point():
    """Quoted strings are written with orjson's escapes (the standard library's where orjson
    refuses a lone surrogate), then YAML's unprintables escaped: the same text as
    ``json.dumps(value, ensure_ascii=False)`` with those escaped, for every code point."""
    from allocation.engine.writer import _UNPRINTABLE, _str_text

    def reference(value: str) -> str:
        quoted = json.dumps(value, ensure_ascii=False)
        return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)

    for start in range(0, 0x110000, 128):
        value = "{" + "".join(map(chr, range(start, start + 128)))  # never plain
        assert _str_text(value) == reference(value)
    for value in ("{\x7f", "{\x1f", '{"', "{\\", "{\u2028", "{\ud800", "{\U0001f600"):
        assert _str_text(value) == reference(value)
        assert yaml.safe_load(to_yaml({"k": value})) == {"k": value}


def test_a_long_string_is_written_alike_but_not_kept(monkeypatch):
    from allocation.engine import writer

    long, short = "{" + "x" * writer._KEPT, "{" + "y" * (writer._KEPT - 2)
    text = to_yaml({"a": long, "b": [long, short], long: 1, short: 2})

    assert yaml.safe_load(text) == {"a": long, "b": [long, short], long: 1, short: 2}
    assert short in writer._TEXTS and long not in writer._TEXTS
    assert short in writer._KEYS and long not in writer._KEYS
    # full, a cache is emptied before another text is kept: never above the bound, and
    # what is written now is kept (keys and values alike)
    monkeypatch.setattr(writer, "_ENTRIES", 2)
    for value in ("{a", "{b", "{c"):
        assert yaml.safe_load(to_yaml([value, {value: value}])) == [value, {value: value}]
        assert len(writer._TEXTS) <= 2 and len(writer._KEYS) <= 2
    assert "{c" in writer._TEXTS and "{c" in writer._KEYS


def test_output_is_sorted_and_stable():
    doc = {"b": [{"z": 1, "a": 2}], "a": "x"}
    text = dump(doc)
    assert text == "a: x\nb:\n- a: 2\n  z: 1\n"
    assert dump(doc, "json") == json.dumps(doc, indent=2, sort_keys=True) + "\n"


def _stdlib(document) -> str:
    """What ``dump(document, "json")`` wrote before it went through orjson."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


EDGE_VALUES = [
    0, -1, 2**63 - 1, -2**63, 2**64 - 1, 2**64, -2**63 - 1, 10**40, True, False, None,
    0.0, -0.0, 1.0, 0.1, 1e-4, 1e-5, 1.5e-7, -2.5e-9, 1e-10, 1e15, 1e16, 1e300, 5e-324,
    1.7976931348623157e308, float("nan"), float("inf"), float("-inf"),
    "", "é", "日本", "😀", "\u2028\u2029", "\x7f\x00\x1f\t\n\"\\", "\ud800", "null", "1e-7",
    "0.00001", "x\nnull", {}, [], [{}], {"": []},
]


@pytest.mark.parametrize("value", EDGE_VALUES, ids=repr)
def test_json_is_the_standard_librarys_for_edge_values(value):
    for document in (value, [value], {"k": value, "a": [value, {}]}):
        assert to_json(document) == _stdlib(document)


def test_json_refuses_and_sorts_as_the_standard_library_does():
    for document in ({2: "a", 1: "b"}, {True: 1}, {"b": 1, "a": {3.5: None}}):
        assert to_json(document) == _stdlib(document)
    for bad in ({1: "a", "b": 2}, {"a": {1, 2}}, {"when": datetime(2025, 1, 1)},
                {"x": _Point(1)}):
        with pytest.raises(TypeError):
            _stdlib(bad)
        with pytest.raises(TypeError):
            to_json(bad)
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError):
        to_json(loop)


@dataclass
class _Point:
    x: int


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text())
json_data = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=30)


@settings(max_examples=500, deadline=None)
@given(json_data)
def test_json_is_the_standard_librarys(document):
    assert to_json(document) == _stdlib(document)


def _example_paths() -> list[Path]:
    return sorted((ROOT / "examples").glob("*.yaml")) + sorted(
        (ROOT / "tests/allocation/engine/models/data").glob("*.yaml"))


@pytest.mark.parametrize("path", _example_paths(), ids=lambda p: p.name)
def test_json_of_every_example_input_and_output_is_the_standard_librarys(path):
    from allocation.engine.manifests import load_files
    from allocation.engine.simulation import simulate

    documents = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    assert to_json(documents) == _stdlib(documents)
    if path.name.endswith(".expected.yaml"):
        return
    output = simulate(load_files([path])).output()
    assert to_json(output) == _stdlib(output)


@pytest.mark.parametrize("dialect", ["seed", "v1"])
def test_json_of_bench_workloads_is_the_standard_librarys(dialect):
    from allocation.engine.manifests import load_texts
    from allocation.engine.simulation import simulate
    from bench.generate import named_gpu_cluster, named_gpu_cluster_v1

    documents = (named_gpu_cluster if dialect == "seed" else named_gpu_cluster_v1)(6, 40)
    assert to_json(as_list(documents)) == _stdlib(as_list(documents))
    output = simulate(load_texts([("bench.yaml", dump(as_list(documents)))])).output()
    assert to_json(output) == _stdlib(output)


def test_json_of_plain_output_does_not_fall_back(monkeypatch):
    """orjson writes a simulation's output itself (the standard library is the exception)."""
    from allocation.engine import writer
    from bench.generate import named_gpu_cluster

    document = as_list(named_gpu_cluster(2, 4))
    expected = _stdlib(document)

    class _NoStdlib:
        @staticmethod
        def dumps(*args, **kwargs):
            raise AssertionError("fell back to json.dumps")

    monkeypatch.setattr(writer, "json", _NoStdlib)
    assert to_json(document) == expected


def _reference_emit(value, indent, out):
    """The emitter before it wrote each line once (a list item's first line was written
    at the item's indent, then cut); kept to hold the two byte for byte equal."""
    from allocation.engine.writer import _inline, _scalar_str

    if isinstance(value, dict):
        for key in sorted(value, key=str):
            item = value[key]
            head = f"{indent}{_scalar_str(str(key))}:"
            if isinstance(item, dict) and item:
                out.append(head)
                _reference_emit(item, indent + "  ", out)
            elif isinstance(item, list) and item:
                out.append(head)
                _reference_emit(item, indent, out)
            else:
                out.append(f"{head} {_inline(item)}")
    else:
        for item in value:
            if isinstance(item, dict | list) and item:
                lines: list[str] = []
                _reference_emit(item, indent + "  ", lines)
                out.append(f"{indent}- {lines[0][len(indent) + 2:]}")
                out.extend(lines[1:])
            else:
                out.append(f"{indent}- {_inline(item)}")


nested = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(st.text(max_size=8),
                                                           st.integers(0, 3)), inner,
                                                 max_size=4)), max_leaves=40)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.dictionaries(st.text(max_size=8), nested, min_size=1, max_size=5),
                 st.lists(nested, min_size=1, max_size=5)))
def test_yaml_is_written_as_before(document):
    out: list[str] = []
    _reference_emit(document, "", out)
    assert to_yaml(document) == "\n".join(out) + "\n"


def _pieces(document, output: str) -> list[str]:
    pieces: list[str] = []
    dump_to(pieces.append, document, output)
    return pieces


@settings(max_examples=300, deadline=None)
@given(st.one_of(nested, st.dictionaries(st.text(max_size=8), st.lists(nested, max_size=4),
                                         max_size=4)))
def test_pieces_make_the_whole_text_and_each_ends_a_line(document):
    for output in ("yaml", "json"):
        try:
            whole = dump(document, output)
        except TypeError:  # JSON cannot sort mixed keys: neither can the pieces
            with pytest.raises(TypeError):
                _pieces(document, output)
            continue
        pieces = _pieces(document, output)
        assert "".join(pieces) == whole
        assert all(piece.endswith("\n") for piece in pieces)


def test_a_lists_items_are_written_one_by_one(monkeypatch):
    from allocation.engine import writer

    document = as_list([{"kind": "Pod", "metadata": {"name": f"p{i}", "note": "é" * i}}
                        for i in range(5)])
    yaml_pieces = _pieces(document, "yaml")
    assert len(yaml_pieces) == 1 + 5 and yaml_pieces[1].startswith("- kind: Pod\n")
    monkeypatch.setattr(writer, "_JSON_ITEMS", 2)  # cut often, beside multi-byte text
    json_pieces = _pieces(document, "json")
    # two items, two, the last one, then the List's kind: never the whole text at once
    assert len(json_pieces) == 4 and "".join(json_pieces) == to_json(document)
    assert json_pieces[0].startswith('{\n  "apiVersion": "v1",\n  "items": [\n    {\n')
    assert json_pieces[1].startswith("    {\n") and json_pieces[1].endswith("},\n")
    assert json_pieces[-1] == '  ],\n  "kind": "List"\n}\n'
    with pytest.raises(ValueError):
        dump_to(print, document, "xml")


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.one_of(nested, st.lists(nested, max_size=5)),
                       max_size=4),
       st.integers(1, 3))
def test_json_pieces_cut_anywhere_make_the_whole_text(document, items):
    from allocation.engine import writer

    with patch.object(writer, "_JSON_ITEMS", items):
        try:
            whole = dump(document, "json")
        except (TypeError, ValueError):
            with pytest.raises((TypeError, ValueError)):
                _pieces(document, "json")
            return
        assert "".join(_pieces(document, "json")) == whole


def test_json_pieces_the_standard_library_writes_are_cut_alike(monkeypatch):
    from allocation.engine import writer

    monkeypatch.setattr(writer, "_JSON_ITEMS", 1)
    items = [{"n": 2**70}, {"f": 1e-07, "g": float("nan")}, {"s": "\ud800"}, {1: "x"},
             {"ok": ["é", {}]}, []]
    document = {"b": items, "a": 1e-05, "c": [], "d": {"\ud800": None}}
    pieces = _pieces(document, "json")
    assert len(pieces) == len(items) + 1
    assert "".join(pieces) == json.dumps(document, indent=2, sort_keys=True,
                                         ensure_ascii=False) + "\n"


@settings(max_examples=200, deadline=None)
@given(st.lists(nested, max_size=6), st.integers(1, 3))
def test_a_list_written_from_an_iterator_is_the_lists_text(items, size):
    from allocation.engine import writer

    with patch.object(writer, "_JSON_ITEMS", size):
        for output in ("yaml", "json"):
            try:
                whole = dump(as_list(items), output)
            except (TypeError, ValueError):
                continue
            pieces: list[str] = []
            dump_list_to(pieces.append, iter(items), output)
            assert "".join(pieces) == whole
            assert all(piece.endswith("\n") for piece in pieces)


def test_a_lists_items_are_read_as_they_are_written(monkeypatch):
    from allocation.engine import writer

    monkeypatch.setattr(writer, "_JSON_ITEMS", 2)
    taken: list[int] = []
    seen_when_written: list[int] = []

    def items():
        for number in range(7):
            taken.append(number)
            yield {"kind": "Pod", "metadata": {"name": f"p{number}"}}

    def write(piece: str) -> None:
        seen_when_written.append(len(taken))

    for output, ahead in (("yaml", 1), ("json", 4)):  # JSON: a piece and the next
        taken.clear()
        seen_when_written.clear()
        dump_list_to(write, items(), output)
        assert len(taken) == 7
        assert seen_when_written[0] <= ahead  # never every item before the first piece
    with pytest.raises(ValueError):
        dump_list_to(print, iter(()), "xml")
