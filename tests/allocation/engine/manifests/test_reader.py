"""Reading YAML safely: size limits, alias bombs, broken syntax."""

from __future__ import annotations

from allocation.engine.manifests.reader import MAX_DOCUMENT_BYTES, read_text
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
