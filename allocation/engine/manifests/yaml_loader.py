"""The PyYAML loader both YAML readers resolve scalars with (``yaml_fast``, the line
reader, and ``yaml_documents``, libyaml's events): SafeLoader's YAML 1.1 types, except a
timestamp, which stays text, and binary data, which becomes text, as kubectl reads them."""

from __future__ import annotations

import base64
import binascii
from typing import Any

import yaml

__all__ = ["go_string", "kube_loader"]


def go_string(data: bytes) -> str:
    """``data`` as Go's JSON encoder writes a Go string: UTF-8, each byte of an invalid
    sequence replaced by U+FFFD (Python's ``replace`` handler gives one per maximal
    invalid subsequence; Go decodes rune by rune, one byte at a time when invalid).

    Returns:
        The text.
    """
    try:
        return data.decode()
    except UnicodeDecodeError:
        pieces: list[str] = []
        rest = data
        while rest:
            try:
                pieces.append(rest.decode())
                break
            except UnicodeDecodeError as exc:
                pieces.append(rest[:exc.start].decode())
                pieces.append("\ufffd" * (exc.end - exc.start))
                rest = rest[exc.end:]
        return "".join(pieces)


def _binary_text(loader: Any, node: Any) -> str:
    """A ``!!binary`` scalar as kubectl reads it: go-yaml decodes the base64 (standard
    alphabet, line breaks ignored) into a Go string, which the JSON sent to the API server
    carries as text (``go_string``)."""
    text = loader.construct_scalar(node)
    try:
        data = base64.b64decode(text.replace("\n", "").replace("\r", ""), validate=True)
    except (binascii.Error, ValueError):
        raise yaml.constructor.ConstructorError(
            None, None, "!!binary value contains invalid base64 data",
            node.start_mark) from None
    return go_string(data)


def kube_loader(base: type) -> type:
    """``base`` (PyYAML's SafeLoader or CSafeLoader) reading scalars as kubectl's YAML
    reader (go-yaml into an untyped value) does:

    - a timestamp stays its text: ``lastTimestamp: 2025-01-01T00:00:00Z`` unquoted is the
      string a typed field checks, and a value passed through (opaque parameters, an
      Event) is written back as it was, not as a datetime;
    - ``!!binary`` data becomes the decoded text (``_binary_text``), never bytes, which no
      Kubernetes field holds.

    Returns:
        The loader class.
    """
    loader = type(f"Kube{base.__name__}", (base,), {})
    loader.add_constructor("tag:yaml.org,2002:timestamp",
                           lambda self, node: self.construct_scalar(node))
    loader.add_constructor("tag:yaml.org,2002:binary", _binary_text)
    return loader
