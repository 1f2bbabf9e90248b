"""Random and hostile inputs end as ``simulate`` promises: exit 0 or 2, nothing else.

The fuzzing itself is in ``tests/fuzzing.py``; it runs here in a subprocess limited to 2 GiB of
address space and a wall-clock timeout, so an input that exhausts memory or hangs fails this
test instead of the machine. ``make bench`` (``bench/bench_fuzz.py``) runs it longer.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


@pytest.mark.parametrize("seed", [1, 2])
def test_fuzzed_inputs_exit_0_or_2_and_nothing_else(seed):
    result = subprocess.run([sys.executable, "-m", "tests.fuzzing", "150", str(seed)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600,
                            preexec_fn=_limited)
    assert result.returncode in (0, 1), result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["other"] == 0, report["first failures"]
    assert report["inputs"] == 150
    assert report["exit 0"] > 0 and report["exit 2"] > 0  # both endings are reached


def test_a_crashing_engine_would_be_caught(monkeypatch):
    # The harness itself can fail: an exception other than InvalidManifests is counted.
    from tests import fuzzing

    monkeypatch.setattr("allocation.engine.simulation.simulate",
                        lambda loaded: (_ for _ in ()).throw(RecursionError("boom")))
    code, detail = fuzzing.outcome(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n")
    assert code == 1 and "RecursionError: boom" in detail
