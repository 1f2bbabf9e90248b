"""Models of the scenarios app (one module per noun)."""

from scenarios.models.scenario import Scenario

__all__ = ["Scenario"]
