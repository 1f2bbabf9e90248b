"""Fuzzing figures: how 1,500 random and hostile inputs end (``tests/fuzzing.py``).

Prints the counts of exit 0 (simulated), exit 2 (invalid, every problem listed) and anything
else (an exception, a hang or a multi-line problem), which must be 0; with CPU and wall time.
"""

from __future__ import annotations

import time

EXAMPLES = 1500


def main() -> None:
    from tests.fuzzing import run

    wall, cpu = time.perf_counter(), time.process_time()
    counts, failures = run(EXAMPLES, seed_value=2026)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"fuzz: {sum(counts.values())} inputs: exit 0 {counts[0]}, exit 2 {counts[2]}, "
          f"other {counts[1]}; {cpu:.1f} CPU s, {wall:.1f} s wall")
    for text, detail in failures[:3]:
        print(f"  failed on {text[:200]!r}:\n{detail}")
