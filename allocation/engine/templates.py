"""``{{ expression }}`` templates: where their CEL placeholders are and what they may read.

Two fields are such templates: a ResourceClass's ``numericParameters[].celTemplate``
(``docs/models.md``) and a DriverSimulation's ``handleData`` (``docs/controlplane.md``).
The manifest checks compile every placeholder; ``models/counter_template.py`` and
``controlplane/requests.py`` expand them.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["PLACEHOLDER", "HANDLE_VARIABLES", "OBJECT_VARIABLES", "placeholders",
           "json_text"]

PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
"""One ``{{ expression }}``; group 1 is the CEL source (with surrounding spaces)."""

OBJECT_VARIABLES = {"object": "dyn"}
"""What ``celTemplate`` and ``requestCount`` read: the vendor parameters object."""

HANDLE_VARIABLES = {"object": "dyn", "claim": "dyn", "pool": "string", "count": "int",
                    "node": "string"}
"""What a ``handleData`` placeholder reads."""


def placeholders(template: str) -> list[str]:
    """The CEL sources of the ``{{ ... }}`` placeholders of ``template``, in order."""
    return [m.group(1).strip() for m in PLACEHOLDER.finditer(template)]


def json_text(value: Any) -> str:
    """A placeholder's CEL value as JSON text, keys sorted (the same text on every run).

    Raises:
        ValueError: the value, or a part of it, has no JSON form (bytes, a duration, a
            timestamp, a type, a map key that is not a string); the message says which.
    """
    return json.dumps(_plain(value), sort_keys=True)


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        # the first by its text: a CEL map's order is not the same on every run
        others = sorted((key for key in value if not isinstance(key, str)), key=repr)
        if others:
            raise ValueError(f"a map key {others[0]!r} is not a string: JSON keys are "
                             "strings")
        return {key: _plain(item) for key, item in value.items()}
    kind = _CEL_KINDS.get(type(value).__name__, "type")
    raise ValueError(f"a {kind} value has no JSON form")


# the CEL kind of a run-time value that JSON cannot hold, by its Python class's name
_CEL_KINDS = {"bytes": "bytes", "timedelta": "duration", "datetime": "timestamp"}
