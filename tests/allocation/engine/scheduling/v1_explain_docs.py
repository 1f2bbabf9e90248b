"""What the tests of the v1 explain annotation share (test_v1_explain*.py): the driver, a
class selecting it, and device documents with a model attribute."""

from __future__ import annotations

from tests.allocation.engine.manifests.v1_docs import device

DRV = "gpu.example.com"
CLASS_SEL = f'device.driver == "{DRV}"'


def cel(expression: str) -> list[dict]:
    return [{"cel": {"expression": expression}}]


def gpu(name: str, model: str, **fields) -> dict:
    return device(name, attributes={"model": {"string": model}}, **fields)
