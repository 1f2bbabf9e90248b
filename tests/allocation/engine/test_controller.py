"""Every controller of the simulation satisfies the ``Controller`` protocol."""

from __future__ import annotations

from allocation.engine.controller import Controller
from allocation.engine.simulation import CONTROLLER_FACTORIES
from tests.factories import node, run


def test_every_controller_the_simulation_builds_is_a_controller():
    controllers = [make("first-fit") for make in CONTROLLER_FACTORIES]
    assert all(isinstance(c, Controller) for c in controllers)
    assert len({c.name for c in controllers}) == len(controllers)


def test_without_timers_there_is_no_wakeup():
    sim = run([node("n1")])
    assert sim.next_wakeup() is None
