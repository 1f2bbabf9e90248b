"""Time a resource.k8s.io/v1 device selector: compile, cached and uncached evaluation.

Run from the repository root: ``python bench/cel_device.py``. The allocator evaluates a
selector for every device it examines; devices that differ only in values the selector does
not read (a UUID) hit the result cache.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from allocation.engine.cel import compile_device_selector  # noqa: E402

DEVICES = 10_000
RUNS = 3
DRIVER = "gpu.example.com"
SELECTOR = ('device.driver == "gpu.example.com" && '
            'device.attributes["gpu.example.com"].model == "A100" && '
            'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0')


def _device(index: int, memory: str) -> dict[str, object]:
    return {"name": f"gpu-{index}",
            "attributes": {"model": {"string": "A100"}, "uuid": {"string": f"GPU-{index}"},
                           "cores": {"int": 108}, "driverVersion": {"version": "1.2.3"}},
            "capacity": {"memory": {"value": memory}}}


def _per_device(devices: list[dict[str, object]], fresh: bool) -> float:
    times = []
    for run in range(RUNS):
        # A distinct source (same meaning) gives an empty cache.
        selector = compile_device_selector(SELECTOR + " && true" * (run + 1) if fresh
                                           else SELECTOR)
        start = time.perf_counter()
        for device in devices:
            selector.matches(DRIVER, device)
        times.append((time.perf_counter() - start) / len(devices) * 1e6)
    return statistics.median(times)


def main() -> None:
    start = time.perf_counter()
    for index in range(200):
        compile_device_selector(SELECTOR + f" && {index} >= 0")
    compile_us = (time.perf_counter() - start) / 200 * 1e6
    same = [_device(index, "80Gi") for index in range(DEVICES)]
    distinct = [_device(index, f"{index + 1}Mi") for index in range(DEVICES)]
    _per_device(same, fresh=False)  # warm the cache
    print(f"compile: {compile_us:.0f} us")
    print(f"cached evaluation (values read shared): {_per_device(same, fresh=False):.1f} us")
    print(f"uncached evaluation (every device differs): {_per_device(distinct, True):.1f} us")


if __name__ == "__main__":
    main()
