"""The base of the schema language (``schema.py``): the ``Schema`` node, the name patterns
and the helpers every node uses to name a path, a JSON type and the closest valid name.

Kept apart from the nodes themselves so each module stays small; ``schema.py`` re-exports
all of it, and the rest of the engine imports it from there.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

from allocation.engine.manifests.problems import ProblemList

__all__ = ["Schema", "join", "type_name", "suggest", "DNS_SUBDOMAIN", "DNS_LABEL",
           "IDENTIFIER"]

DNS_SUBDOMAIN = (
    re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"),
    253,
    "must be a DNS subdomain: lower case letters, digits, '-' and '.', starting and ending "
    "with a letter or digit, at most 253 characters",
)
DNS_LABEL = (
    re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
    63,
    "must be a DNS label: lower case letters, digits and '-', starting and ending with a "
    "letter or digit, at most 63 characters",
)
IDENTIFIER = (
    re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$"),
    63,
    "must be an identifier ([A-Za-z_][A-Za-z0-9_]*) of at most 63 characters",
)


def join(path: str, key: str | int) -> str:
    """The field path of ``key`` below ``path`` (``spec.items[2].name``)."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def suggest(name: str, valid: Iterable[str]) -> str:
    """`` (did you mean X?)`` for the closest valid name, or an empty string."""
    choices = list(valid)
    lowered = {c.lower(): c for c in choices}
    if name.lower() in lowered:
        return f" (did you mean {lowered[name.lower()]}?)"
    match = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    return f" (did you mean {match[0]}?)" if match else ""


def type_name(value: Any) -> str:
    """How a problem names the JSON type of ``value`` (``string``, ``object``, ``null``)."""
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list",
            dict: "object"}.get(type(value), type(value).__name__)


class Schema:
    """Base class: ``check`` reports problems for ``value`` found at ``path``."""

    def check(self, value: Any, path: str, problems: ProblemList) -> None:  # pragma: no cover
        raise NotImplementedError

    def valid(self, value: Any) -> bool:
        """Whether ``check`` would report nothing for ``value``."""
        scratch = ProblemList()
        self.check(value, "", scratch)
        return not scratch
