"""``{{ expression }}`` templates: where their CEL placeholders are and what they may read.

Two fields are such templates: a ResourceClass's ``numericParameters[].celTemplate``
(``docs/models.md``) and a DriverSimulation's ``handleData`` (``docs/controlplane.md``).
The manifest checks compile every placeholder; ``models/counter_template.py`` and
``controlplane/requests.py`` expand them.
"""

from __future__ import annotations

import re

__all__ = ["PLACEHOLDER", "HANDLE_VARIABLES", "OBJECT_VARIABLES", "placeholders"]

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
