"""Control-plane controllers (KEP-3063): simulated drivers and the PodSchedulingContext
negotiation between them and the scheduler. See ``docs/controlplane.md``.

Modules: ``common`` (shared names, Event reasons), ``pools`` (a driver's pools),
``requests`` (``requestCount``, ``handleData``), ``driver`` (:class:`DriverController`),
``negotiation`` (the scheduler's side). The names below load on first use, because the
scheduler imports ``common`` while ``negotiation`` imports the scheduler.
"""

from __future__ import annotations

import importlib

__all__ = ["DriverController", "Negotiation"]

_HOMES = {"DriverController": "driver", "Negotiation": "negotiation"}


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
