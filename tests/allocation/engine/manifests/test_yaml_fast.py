"""The line reader of plain block YAML (``manifests/yaml_fast.py``) gives what libyaml gives.

``iter_yaml_documents(text)`` must yield the same documents, problems and errors whether the
fast reader takes the text (or some of its documents) or not: on every file of the examples
and test data, on texts written to probe the edges of the subset it reads, and on a few
hundred random line-level changes of those files.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from allocation.engine.manifests.yaml_documents import iter_yaml_documents
from allocation.engine.manifests.yaml_fast import fast_documents
from allocation.engine.writer import to_yaml

ROOT = Path(__file__).resolve().parents[4]
FILES = [*sorted((ROOT / "examples").glob("*.yaml")),
         *sorted((ROOT / "tests/allocation/engine/manifests/data").glob("*.yaml")),
         *sorted((ROOT / "tests/allocation/engine/models/data").glob("*.yaml"))]

EDGES = [
    "", "\n", "---\n", "---\n---\n", "a: 1\n---\n", "a: 1\n---", "# c\n---\na: 1\n",
    "# only a comment\n", "a: 1\n---\n# c\n", "\n\na: 1\n\n", "a:\n", "a:\nb: 2\n",
    "a:\n- 1\n- 2\nb: x\n", "- a: 1\n  b:\n  - x\n  c: 2\n- y\n", "- - a\n", "-\n  a: 1\n",
    "a: 'x: y'\nb: \"q # r\"\n", "'5': a\n\"k\": v\n", "5: a\n", "true: a\n", "~: a\n",
    "a: yes\nb: on\nc: ~\nd: null\ne: 0o7\nf: 0x1F\ng: 1_000\nh: 1e3\ni: .5\nj: -1\n",
    "a: .inf\n", "a: .nan\n", "a: 2024-01-01\n", "a: 2024-01-01T00:00:00Z\n", "a: 1:30\n",
    "a: 1\na: 2\n", "a: &x 1\nb: *x\n", "a: !!str 1\n", "<<: {a: 1}\n", "a: {}\nb: []\n",
    "a: {x: 1}\n", "a: [1, 2]\n", "a: b\n  c\n", "a: b # c\n", "a: |\n  x\n", "a: |+\n  x\n\n",
    "a: |\n  x\n---\nb: 1\n", "a: >-\n  x\n  y\n---\nb: 1\n", "a: x\n...\n",
    "%YAML 1.1\n---\na: 1\n",
    "--- a\n", "--- # c\na: 1\n", "a:\tb\n", "a: 1\r\nb: 2\r\n", "\ufeffa: 1\n", "a: é\n",
    "a:\n    b: 1\n  c: 2\n", "a:\n  b: 1\n    c: 2\n", "a: 1\n- b\n", "  a: 1\n", "a: 1\n b: 2\n",
    "a: ''\nb: \"\"\n", "a: 'it''s'\n", "a: \"x\\ty\"\n", "a b: c  d\n", "a: (x)\n", "a: x=y\n",
    "- 1\n- true\n- null\n- x\n", "a:\n  - b:\n    - c\n", "a: b:\n", "a:b\n", "a: [\n", "a: 'x\n",
    "key: " + "x" * 70 + "\nother: " + "x" * 70 + "\n",
    "".join(f"{'  ' * i}k{i}:\n" for i in range(50)) + "  " * 50 + "v: 1\n",
    "a: 1\n---\nb: [\n---\nc: 3\n", "a: 1\n---\nb: |\n  x\n---\nc: d: e\n",
    "---", "---\n---", "a: 1\n---\n---\nb: 2\n", "a: 1\n---\n\n---\n", "\n---\n\n",
    "a: 1\n ---\nb: 2\n", "a: 1\n---x\nb: 2\n", "a: 1\n---\r\nb: 2\n", "a: x---\n---\n",
    # every first character of a plain scalar, alone and before a word (typed or a string)
    "".join(f"{c}{n}: {c}\n- {c}1\n" for n, c in enumerate(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./(")),
    "".join(f"k{n}: {word}\n" for n, word in enumerate(
        ("Yes", "YES", "No", "ON", "Off", "True", "FALSE", "Null", "NULL", "y", "n", "Y",
         "N", "yes_", "nope", "offset", "trueish", ".5", ".inf_", "(x)", "_1", "=", "=x"))),
]


def _read(text: str, fast: bool) -> list:
    found: list = []
    try:
        for doc in iter_yaml_documents(text, fast=fast):
            found.append((doc.doc, doc.data, doc.fatal, doc.path, doc.problems))
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        found.append((type(exc).__name__, str(exc)))
    return found


def _typed(value):
    """``value`` with each scalar's type beside it (``1 == True`` must not pass)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def _assert_same(text: str) -> None:
    assert _typed(_read(text, True)) == _typed(_read(text, False)), text


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_files_read_the_same(path):
    _assert_same(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("text", EDGES)
def test_edges_read_the_same(text):
    _assert_same(text)


def test_the_planner_s_own_output_is_read_fast():
    import yaml

    docs = [d for path in FILES for d in yaml.safe_load_all(path.read_text(encoding="utf-8"))
            if isinstance(d, dict)]
    text = "---\n".join(to_yaml(d) for d in docs)
    handed: list[str] = []

    def read_one(piece: str):
        handed.append(piece)
        found = list(iter_yaml_documents(piece, fast=False))
        return True, found[0].data

    assert fast_documents(text, read_one) is not None
    assert len(handed) < len(docs) / 4  # quoted CEL and escapes: libyaml's
    _assert_same(text)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_repeated_documents_read_the_same(path):
    # From the second document of a shape on, documents are built by the shape's compiled
    # function: every document of every file, read a third time, is still libyaml's.
    text = path.read_text(encoding="utf-8")
    _assert_same("\n---\n".join([text] * 3))


@pytest.mark.parametrize("bounds", [(2, 1, 3), (8, 2, 40), (65536, 4096, 1)])
def test_the_bounds_of_the_caches_change_nothing(monkeypatch, bounds):
    # Past its bound a cache keeps nothing new (a line's shape gets a number of its own, a
    # document's shape is not remembered, a large one is never compiled): the same documents.
    from allocation.engine.manifests import yaml_fast

    for name, value in zip(("_CACHED", "_SHAPES_KEPT", "_COMPILED_TOKENS"), bounds,
                           strict=True):
        monkeypatch.setattr(yaml_fast, name, value)
    for path in FILES[:6]:
        _assert_same("\n---\n".join([path.read_text(encoding="utf-8")] * 3))


def test_one_list_document_of_many_new_lines_reads_the_same(monkeypatch):
    # ``kubectl get -o yaml`` writes one ``kind: List``: its new lines (names, labels) are
    # found one after another in one pass, and past the line cache's bound every line is
    # new (a 1 MB list of such lines took minutes while each search began at the start)
    from allocation.engine.manifests import yaml_fast

    monkeypatch.setattr(yaml_fast, "_CACHED", 16)
    items = "".join(f"- kind: Node\n  metadata:\n    name: n{i}\n    labels:\n      rack: r{i}\n"
                    for i in range(300))
    text = "apiVersion: v1\nkind: List\nitems:\n" + items
    assert fast_documents(text, lambda t: None) is not None
    _assert_same(text)


def test_documents_of_one_shape_differ_in_their_scalars_only():
    shape = "kind: Pod\nmetadata:\n  name: {}\nspec:\n  a: {{}}\n  b: []\n  c:\n  - x: {}\n"
    text = "---\n".join(shape.format(name, value) for name, value in
                        (("p1", "1"), ("p2", "'1'"), ("p3", "true"), ("p4", "null")))
    _assert_same(text)
    docs = fast_documents(text, lambda piece: (False, None))
    assert [(d["metadata"]["name"], d["spec"]["c"][0]["x"]) for d in docs] == [
        ("p1", 1), ("p2", "1"), ("p3", True), ("p4", None)]
    for first, second in zip(docs, docs[1:], strict=False):  # nothing is shared
        assert first["spec"]["a"] is not second["spec"]["a"]
        assert first["spec"]["b"] is not second["spec"]["b"]
        assert first["spec"]["c"][0] is not second["spec"]["c"][0]


def test_a_shape_outside_the_subset_is_libyaml_s_every_time():
    # a key given twice: the whole text goes to libyaml, however often the shape repeats
    text = "---\n".join(f"a: {n}\nb: 2\na: 3\n" for n in range(4))
    _assert_same(text)
    assert fast_documents(text, lambda piece: (False, None)) is None
    handed: list[str] = []

    def read_one(piece: str):
        handed.append(piece)
        return True, "read by libyaml"

    text = "---\n".join(f"a: {n}\nb:\n    c: 1\n  d: 2\n" for n in range(3))
    assert fast_documents(text, read_one) == ["read by libyaml"] * 3
    assert len(handed) == 3


def _mutated(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    index = rng.randrange(len(lines))
    change = rng.randrange(6)
    if change == 0:
        del lines[index]
    elif change == 1:
        lines.insert(index, lines[index])
    elif change == 2:
        lines[index] = " " * rng.choice((1, 2, 4)) + lines[index]
    elif change == 3:
        lines[index] = lines[index][rng.choice((1, 2)):]
    elif change == 4:
        lines.insert(index, "---")
    else:
        other = rng.randrange(len(lines))
        lines[index], lines[other] = lines[other], lines[index]
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(4))
def test_random_line_changes_read_the_same(seed):
    rng = random.Random(seed)
    texts = [path.read_text(encoding="utf-8") for path in FILES]
    for _ in range(80):
        _assert_same(_mutated(rng.choice(texts), rng))


def test_repeated_lines_read_as_written_and_fresh_collections_are_not_shared():
    # Each distinct line is matched once and its tokens reused: a repeated line (at another
    # indentation, after a dash, in a later document) reads as it does alone, and an empty
    # `{}` or `[]` is a new object every time it is written.
    common = "a: 1\nb:\n  a: 1\n  c: {}\n  d: []\n"
    text = common + "l:\n- a: 1\n- a: 1\n---\n" + common
    _assert_same(text)
    first, second = fast_documents(text, lambda piece: (False, None))
    assert first == {"a": 1, "b": {"a": 1, "c": {}, "d": []}, "l": [{"a": 1}, {"a": 1}]}
    assert second == {"a": 1, "b": {"a": 1, "c": {}, "d": []}}
    assert first["b"]["c"] is not second["b"]["c"]
    assert first["b"]["d"] is not second["b"]["d"]
    assert first["l"][0] is not first["l"][1]
