"""allocation.engine.simulation: rounds to a fixed point, broken controllers, checkpoints."""

import pytest

from allocation.engine import simulation as sim_module
from allocation.engine.manifests import load_texts
from allocation.engine.simulation import Simulation
from tests import factories as f


def _loaded():
    docs = [f.node("n1"), f.named_slice("n1", [f.device("d0")]), f.resource_class(),
            f.claim("c1"), f.pod("p1", claims={"gpu": "c1"})]
    return load_texts([("a.yaml", f.to_yaml(docs))])


class _Broken:
    name = "broken"

    def __init__(self) -> None:
        self.calls = 0

    def reconcile(self, state):
        self.calls += 1
        raise KeyError("not pinned on any object")

    def next_wakeup(self, state):
        raise AssertionError("a broken controller is not asked again")


def test_a_controller_that_fails_outside_any_object_is_skipped_and_the_others_go_on(
        monkeypatch):
    broken = _Broken()
    monkeypatch.setattr(sim_module, "CONTROLLER_FACTORIES",
                        [lambda s: broken, *sim_module.CONTROLLER_FACTORIES])
    simulation = Simulation.from_loaded(_loaded())
    simulation.settle()
    simulation.settle()
    assert simulation.state.get("Pod", "default", "p1").node_name == "n1"
    assert broken.calls == 1
    assert [f.text for f in simulation.failures] == ["broken: KeyError: 'not pinned on any object'"]
    assert simulation.next_wakeup() is None


def test_the_checkpoint_runs_before_every_controller_and_can_stop_the_simulation():
    simulation = Simulation.from_loaded(_loaded())
    seen = []

    class Stop(Exception):
        pass

    def checkpoint():
        seen.append(len(seen))
        if len(seen) == 3:
            raise Stop

    simulation.checkpoint = checkpoint
    with pytest.raises(Stop):
        simulation.settle()
    assert len(seen) == 3  # stopped at once: no controller ran after it
    assert simulation.state.get("Pod", "default", "p1").node_name == "n1"  # the scheduler ran
    count = len(sim_module.CONTROLLER_FACTORIES)
    calm = Simulation.on(Simulation.from_loaded(_loaded()).state, checkpoint=lambda: seen.append(1))
    seen.clear()
    rounds = calm.settle()
    assert len(seen) == rounds * count


@pytest.mark.parametrize("example", ["demo.yaml", "quickstart.yaml", "v1-gpus.yaml"])
def test_a_shared_output_writes_the_same_and_leaves_the_state_alone(example):
    from pathlib import Path

    from allocation.engine.manifests import load_files
    from allocation.engine.simulation import simulate
    from allocation.engine.writer import dump

    path = Path(__file__).resolve().parents[3] / "examples" / example
    simulation = simulate(load_files([path]))
    copied = simulation.output()
    shared = simulation.output(shared=True)
    for output in ("yaml", "json"):
        assert dump(shared, output) == dump(copied, output)
    for item in shared["items"]:  # the top-level objects are the output's own
        for value in item.values():
            if isinstance(value, dict):
                value["changed"] = True
    assert dump(simulation.output(), "json") == dump(copied, "json")


def _count_manifests(monkeypatch) -> list[str]:
    """The names of the objects whose manifest is made from now on, in order."""
    from allocation.engine.objects import KObject

    made: list[str] = []
    original = KObject.to_manifest

    def counted(self, shared=False):
        made.append(self.name)
        return original(self, shared)

    monkeypatch.setattr(KObject, "to_manifest", counted)
    return made


def test_output_items_are_the_outputs_items_made_one_at_a_time(monkeypatch):
    simulation = Simulation.from_loaded(_loaded())
    simulation.settle()
    assert list(simulation.output_items()) == simulation.output()["items"]
    made = _count_manifests(monkeypatch)
    items = simulation.output_items(shared=True)
    next(items)
    assert len(made) == 1  # the rest are made when they are written


def test_simulate_writes_a_piece_before_every_document_is_made(monkeypatch, tmp_path):
    from allocation.engine import writer

    path = tmp_path / "a.yaml"
    docs = [f.node("n1"), f.resource_class()] + [f.pod(f"p{i}") for i in range(6)]
    path.write_text(f.to_yaml(docs))
    made = _count_manifests(monkeypatch)
    monkeypatch.setattr(writer, "_JSON_ITEMS", 2)
    when: list[int] = []
    pieces: list[str] = []

    def write(piece: str) -> None:
        when.append(len(made))
        pieces.append(piece)

    for output in ("yaml", "json"):
        for seen in (made, when, pieces):
            seen.clear()
        sim_module.simulate_to(write, [str(path)], output=output)
        assert when[0] < len(made) == 8
        assert "".join(pieces) == sim_module.simulate_files([str(path)], output=output)


@pytest.mark.parametrize("example", ["demo.yaml", "v1-gpus.yaml"])
def test_a_settled_simulation_and_its_forks_are_freed_by_reference_counting(example):
    """No reference cycle holds a state or a controller: a console keeps its baseline frozen
    out of the cyclic collector's sight (docs/scenarios.md, "The baseline"), so a baseline
    it replaces is freed only if reference counting alone frees it."""
    import gc
    import weakref
    from pathlib import Path

    text = (Path(__file__).resolve().parents[3] / "examples" / example).read_text()
    simulation = sim_module.simulate(load_texts([(example, text)]))
    fork = simulation.fork()
    fork.settle()
    refs = [weakref.ref(x) for s in (simulation, fork) for x in (s, s.state, *s.controllers)]
    gc.disable()
    try:
        del simulation, fork
        assert [r() for r in refs] == [None] * len(refs)
    finally:
        gc.enable()
