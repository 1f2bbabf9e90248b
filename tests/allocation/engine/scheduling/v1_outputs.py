"""Reading a simulation's output in the v1 scheduler's tests (test_v1*.py, test_cache.py):
its objects of one kind by name, and a pod's PodScheduled reason and message."""

from __future__ import annotations


def items(output: dict, kind: str) -> dict[str, dict]:
    return {i["metadata"]["name"]: i for i in output["items"] if i["kind"] == kind}


def pod_condition(output: dict, name: str) -> tuple[str, str]:
    condition = items(output, "Pod")[name]["status"]["conditions"][0]
    return condition["reason"], condition["message"]
