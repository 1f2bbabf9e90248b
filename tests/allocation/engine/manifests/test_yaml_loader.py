"""The scalars both YAML readers construct as kubectl's reader does (yaml_loader.py)."""

from __future__ import annotations

import pytest
import yaml

from allocation.engine.manifests.yaml_documents import iter_yaml_documents
from allocation.engine.manifests.yaml_loader import go_string, kube_loader


@pytest.mark.parametrize(("data", "text"), [
    (b"hello", "hello"),
    (b"\xff", "\ufffd"),
    # Go replaces byte by byte: a truncated 3-byte sequence is two replacements, where
    # Python's "replace" handler gives one
    (b"\xe2\x82A", "\ufffd\ufffdA"),
    (b"\xed\xa0\x80", "\ufffd" * 3),  # an encoded surrogate is three invalid bytes
    (b"a\xc3\xa9\xffb", "a\u00e9\ufffdb"),
])
def test_go_string_replaces_each_invalid_byte(data, text):
    assert go_string(data) == text


def test_binary_data_is_its_decoded_text():
    loader = kube_loader(yaml.SafeLoader)
    assert yaml.load("a: !!binary aGVsbG8=\nb: !!binary |\n  /+Lo\n  gkE=\n", loader) == {
        "a": "hello", "b": "\ufffd" * 4 + "A"}


def test_binary_data_is_text_in_both_readers_and_as_a_key():
    text = "kind: Event\nmessage: !!binary aGk=\n? !!binary aw==\n: v\n"
    for fast in (True, False):
        [doc] = iter_yaml_documents(text, fast=fast)
        assert doc.problems == []
        assert doc.data == {"kind": "Event", "message": "hi", "k": "v"}


def test_bad_base64_is_a_problem_at_the_field():
    [doc] = iter_yaml_documents("kind: Event\nmessage: !!binary aGk\n")
    assert doc.problems == [("message", "invalid value at line 2: !!binary value "
                             "contains invalid base64 data")]
