"""v1 names for seed names: attribute ids, device and request names, versions.

resource.k8s.io/v1 is stricter than the seed dialects (spec ``v1.md`` section 1): an
attribute or capacity id is a C identifier of at most 32 characters (the seeds allowed 63),
device, request and counter names are DNS labels, and versions are strict semver 2.0.0.
Every function here is deterministic, so a renamed item gets the same name in every run and
in every object that refers to it.
"""

from __future__ import annotations

import hashlib
import re

from allocation.engine.versions import parse_version

__all__ = ["MAX_ID", "MAX_LABEL", "attribute_id", "dns_label", "label_attribute",
           "strict_version"]

MAX_ID = 32
MAX_LABEL = 63
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_ID = re.compile(r"[^A-Za-z0-9_]")
_NOT_LABEL = re.compile(r"[^a-z0-9-]+")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def attribute_id(name: str) -> str:
    """The v1 id for a seed attribute name or label name: other characters than letters,
    digits and ``_`` become ``_`` (``rack-id`` -> ``rack_id``); longer than 32 characters,
    its first 23 characters, ``_`` and 8 hex digits of its hash."""
    if _C_IDENTIFIER.fullmatch(name) and len(name) <= MAX_ID:
        return name
    cleaned = _NOT_ID.sub("_", name)
    if not cleaned or cleaned[0].isdigit():
        cleaned = "_" + cleaned
    if len(cleaned) <= MAX_ID:
        return cleaned
    return f"{cleaned[:MAX_ID - 9]}_{_digest(name)}"


def label_attribute(key: str) -> str:
    """The v1 qualified name for a label key: ``prefix/name`` keeps its prefix as the domain
    (a DNS subdomain, as a label prefix is), and the name becomes a C identifier."""
    prefix, slash, name = key.rpartition("/")
    ident = attribute_id(name)
    return f"{prefix}/{ident}" if slash else ident


def dns_label(text: str) -> str:
    """A DNS label for ``text`` (a device path such as ``gpu-1/quarters/quarter-0``):
    lowercase, runs of other characters as ``-``, at most 63 characters (a hash suffix when
    cut). ``text`` that is already a DNS label is returned unchanged."""
    label = _NOT_LABEL.sub("-", text.lower()).strip("-") or "x"
    if len(label) > MAX_LABEL:
        label = f"{label[:MAX_LABEL - 9].rstrip('-')}-{_digest(text)}"
    return label


def strict_version(text: str) -> str:
    """The strict semver 2.0.0 text of a seed version (``v12.0`` -> ``12.0.0``).

    Raises:
        ValueError: ``text`` is not a version even read tolerantly.
    """
    return str(parse_version(text))  # the canonical form: v1.02 -> 1.2.0
