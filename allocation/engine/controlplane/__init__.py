"""Control-plane controllers (KEP-3063): simulated drivers and the PodSchedulingContext
negotiation between them and the scheduler. See ``docs/controlplane.md``.

Modules: ``common`` (shared names, Event reasons), ``pools`` (a driver's pools),
``requests`` (``requestCount``, ``handleData``), ``driver`` (:class:`DriverController`),
``negotiation`` (the scheduler's side, handed to the scheduler by ``simulation.py``).
"""

from __future__ import annotations

from allocation.engine.controlplane.driver import DriverController
from allocation.engine.controlplane.negotiation import Negotiation

__all__ = ["DriverController", "Negotiation"]
