"""The ``simulate`` output of every example stays byte-identical.

Each case is stored under ``data/golden/``; a refactoring that changes any byte of any
example's output (YAML or JSON, first-fit or best-fit, with and without advancing the
virtual clock) fails here. When a change of output is intended, regenerate the files with
``python tests/allocation/engine/test_examples_golden.py`` and review the diff.
"""

from __future__ import annotations

import re
import sys
from datetime import timedelta
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = Path(__file__).resolve().parent / "data" / "golden"
INPUTS = sorted((ROOT / "examples").glob("*.yaml")) + sorted(
    p for p in (ROOT / "tests/allocation/engine/models/data").glob("*.yaml")
    if not p.name.endswith(".expected.yaml"))
ADVANCES = {"": None, "-advance-8h": timedelta(hours=8)}
CASES = [(path, strategy, output, suffix)
         for path in INPUTS
         for strategy in ("first-fit", "best-fit")
         for output in ("yaml", "json")
         for suffix in ADVANCES]


def _golden_path(path: Path, strategy: str, output: str, suffix: str) -> Path:
    return GOLDEN / f"{path.stem}.{strategy}{suffix}.{output}"


def _simulate(path: Path, strategy: str, output: str, suffix: str) -> str:
    from allocation.engine.simulation import simulate_files

    return simulate_files([str(path)], strategy, advance=ADVANCES[suffix], output=output)


def test_every_example_has_golden_outputs():
    assert {p.name for p in GOLDEN.iterdir()} == {
        _golden_path(*case).name for case in CASES}
    assert any(p.parent.name == "examples" for p in INPUTS)


@pytest.mark.parametrize("case", CASES,
                         ids=lambda c: f"{c[0].stem}-{c[1]}-{c[2]}{c[3]}")
def test_simulate_output_is_byte_identical(case):
    expected = _golden_path(*case).read_text(encoding="utf-8")
    assert _simulate(*case) == expected


@pytest.mark.parametrize("output", ["yaml", "json"])
def test_v1_example_simulates_byte_identically_twice(output):
    """The v1 example (README tour) gives the same bytes on every run, and places what the
    README says: a whole GPU on node-a, both halves on node-b, train-2 pending, claims made
    from the templates."""
    path = ROOT / "examples" / "v1-gpus.yaml"
    first = _simulate(path, "first-fit", output, "")
    assert _simulate(path, "first-fit", output, "") == first
    if output == "yaml":
        assert "message: Successfully assigned default/train-1 to node-a" in first
        assert "message: Successfully assigned default/infer-2 to node-b" in first
        assert 'message: "0/3 nodes are available: 3 cannot allocate all claims."' in first
        assert "name: train-1-gpu-6kgcc" in first and "resourceClaimName:" not in (
            (ROOT / "examples" / "v1-gpus.yaml").read_text(encoding="utf-8"))


def test_readme_v1_tour_shows_what_simulate_prints():
    """Every YAML excerpt of the README's v1 tour is a verbatim part of the output."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = readme.split("## A resource.k8s.io/v1 cluster", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^  ```yaml\n(.*?)^  ```", tour, re.S | re.M)
    output = _simulate(ROOT / "examples" / "v1-gpus.yaml", "first-fit", "yaml", "")
    assert len(blocks) == 2
    for block in blocks:
        assert "\n".join(line[2:] for line in block.splitlines()) in output


if __name__ == "__main__":  # regenerate: python tests/allocation/engine/test_examples_golden.py
    sys.path.insert(0, str(ROOT))
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for stale in GOLDEN.iterdir():
        stale.unlink()
    for case in CASES:
        _golden_path(*case).write_text(_simulate(*case), encoding="utf-8")
    print(f"wrote {len(CASES)} files to {GOLDEN}")
