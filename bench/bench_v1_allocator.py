"""The v1 allocator alone: allocation-only claims per CPU-second (docs/v1.md, speed).

1,000 nodes x 8 devices (one ResourceSlice per node, ``memory`` as a capacity: devices 0-3
40Gi, 4-7 80Gi), one DeviceClass ``device.driver == "gpu.example.com"``, 8,000 single-device
claims selecting ``memory >= 80Gi`` for every 4th claim, else ``>= 32Gi``. For each claim the
nodes are tried in name order, as the seed scheduler does, and the first fit is committed
to the book. Uses the v1 device CEL when it is installed (``allocation.engine.cel.device``),
else a stand-in that evaluates exactly these two selector forms.
"""

from __future__ import annotations

import re
import time
from fractions import Fraction

from allocation.engine.quantity import Quantity
from allocation.engine.v1 import Allocator, make_profile

DRIVER = "gpu.example.com"
CLASS = f'device.driver == "{DRIVER}"'
_MEMORY = re.compile(r'device\.capacity\["([^"]+)"\]\.memory'
                     r'\.compareTo\(quantity\("([^"]+)"\)\) >= 0')


def _selector(text: str) -> str:
    return f'device.capacity["{DRIVER}"].memory.compareTo(quantity("{text}")) >= 0'


class _StandIn:
    """The two selector forms of this benchmark, for when the v1 CEL is not installed."""

    def __init__(self, source: str) -> None:
        self.source = source
        m = _MEMORY.fullmatch(source)
        self._minimum = Quantity.parse(m.group(2)).value if m else None
        if m is None and source != CLASS:
            raise ValueError(f"stand-in cannot evaluate {source!r}")

    def matches(self, driver: str, device: dict) -> bool:
        if self._minimum is None:
            return driver == DRIVER
        value = device["capacity"]["memory"]["value"]
        return Fraction(Quantity.parse(value).value) >= self._minimum


def _compiler():
    try:
        from allocation.engine.cel.device import compile_device_selector
    except ImportError:
        return _StandIn, "stand-in selectors"
    return compile_device_selector, "v1 CEL"


def cluster(nodes: int = 1000) -> tuple[list[dict], list[dict], list[dict]]:
    """(nodes, slices, classes) of the benchmark."""
    node_docs, slices = [], []
    for n in range(nodes):
        name = f"node-{n:04d}"
        node_docs.append({"metadata": {"name": name, "labels": {}}})
        devices = [{"name": f"gpu-{i}", "capacity": {
            "memory": {"value": "80Gi" if i >= 4 else "40Gi"}}} for i in range(8)]
        slices.append({"metadata": {"name": f"{name}-gpu"}, "spec": {
            "driver": DRIVER, "nodeName": name,
            "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "devices": devices}})
    classes = [{"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {
        "expression": CLASS}}]}}]
    return node_docs, slices, classes


def claims(count: int = 8000) -> list[dict]:
    out = []
    for i in range(count):
        memory = "80Gi" if i % 4 == 0 else "32Gi"
        out.append({"metadata": {"name": f"claim-{i}", "namespace": "default",
                                 "uid": f"uid-{i}"},
                    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1,
                        "selectors": [{"cel": {"expression": _selector(memory)}}]}}]}}})
    return out


def run(nodes: int = 1000, count: int = 8000) -> dict:
    compile_selector, which = _compiler()
    node_docs, slices, classes = cluster(nodes)
    todo = claims(count)
    alloc = Allocator(make_profile(), compile_selector, slices=slices, classes=classes)
    placed = 0
    started = time.process_time()
    for c in todo:
        found = alloc.first_fit(node_docs, [c])
        if found is not None:
            alloc.commit(c, found[1].allocations[0])
            placed += 1
    cpu = time.process_time() - started
    return {"claims": count, "placed": placed, "cpu": cpu, "cel": which}


def main() -> None:
    r = run()
    print(f"v1 allocator ({r['cel']}): 1000 nodes x 8 devices, {r['claims']} claims, "
          f"{r['placed']} placed, {r['cpu']:.2f} CPU-s, "
          f"{r['claims'] / r['cpu']:.0f} claims per CPU-second (allocation only)")


if __name__ == "__main__":
    main()
