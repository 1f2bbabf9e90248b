"""The engine never changes the documents it was given.

What-if evaluations share the baseline's unchanged documents between simulations (see
allocation/engine/scenarios/), so a simulation that wrote into its input would leak into
every later one. Every example cluster, with all its kinds, is simulated (and its clock
advanced) and its documents compared with a copy taken before.
"""

from __future__ import annotations

import copy
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from allocation.engine.manifests import load_documents
from allocation.engine.simulation import Simulation

EXAMPLES = sorted((Path(__file__).resolve().parents[3] / "examples").glob("*.yaml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_simulation_leaves_its_input_documents_as_they_were(path):
    documents = [d for d in yaml.safe_load_all(path.read_text()) if d]
    before = copy.deepcopy(documents)
    simulation = Simulation.from_loaded(load_documents((path.name, d) for d in documents))
    simulation.settle()
    simulation.advance(timedelta(hours=2))
    assert documents == before
    # ...and a second run on the same documents gives the same result.
    again = Simulation.from_loaded(load_documents((path.name, d) for d in documents))
    again.settle()
    again.advance(timedelta(hours=2))
    assert again.output()["items"] == simulation.output()["items"]


def test_the_examples_cover_every_kind_the_engine_acts_on():
    kinds = {d["kind"] for p in EXAMPLES for d in yaml.safe_load_all(p.read_text()) if d}
    assert {"NodeResourceSlice", "NodeResourceCapacity", "ResourceClaim", "Pod",
            "ProvisioningRequest", "NodeGroup", "DriverSimulation"} <= kinds
