"""The ``simulate`` output of every example stays byte-identical.

Each case is stored under ``data/golden/``; a refactoring that changes any byte of any
example's output (YAML or JSON, first-fit or best-fit, with and without advancing the
virtual clock) fails here. When a change of output is intended, regenerate the files with
``python tests/allocation/engine/test_examples_golden.py`` and review the diff.
"""

from __future__ import annotations

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


if __name__ == "__main__":  # regenerate: python tests/allocation/engine/test_examples_golden.py
    sys.path.insert(0, str(ROOT))
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for stale in GOLDEN.iterdir():
        stale.unlink()
    for case in CASES:
        _golden_path(*case).write_text(_simulate(*case), encoding="utf-8")
    print(f"wrote {len(CASES)} files to {GOLDEN}")
