"""The wait for binding conditions (``scheduling/v1_prebind.py``); simulations are in
``test_v1.py``."""

from __future__ import annotations

from datetime import timedelta

from allocation.engine.events import VirtualClock, parse_time
from allocation.engine.objects import ResourceClaimV1
from allocation.engine.scheduling.v1_prebind import deadline, verdict
from allocation.engine.state import ClusterState

RESULT = {"request": "r", "driver": "d", "pool": "p", "device": "g",
          "bindingConditions": ["Ready"], "bindingFailureConditions": ["Broken"]}


def _claim(conditions: list[dict]) -> ResourceClaimV1:
    return ResourceClaimV1({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {}},
        "status": {"allocation": {"devices": {"results": [RESULT]},
                                  "allocationTimestamp": "2025-01-01T00:00:00Z"},
                   "devices": [{"driver": "d", "pool": "p", "device": "g",
                                "conditions": conditions}]}})


def _state(after: timedelta = timedelta(0)) -> ClusterState:
    return ClusterState(VirtualClock(parse_time("2025-01-01T00:00:00Z") + after))


def _true(type_: str) -> dict:
    return {"type": type_, "status": "True", "reason": "R", "message": "M"}


def test_waiting_until_every_condition_is_true():
    assert verdict(_state(), [_claim([])]) == ("waiting", None)
    assert verdict(_state(), [_claim([_true("Ready")])]) == ("ready", None)


def test_a_true_failure_condition_fails_first():
    assert verdict(_state(), [_claim([_true("Ready"), _true("Broken")])]) == (
        "failed", 'claim c binding failed: reason=R, message="M"')


def test_the_timeout_is_600_seconds_after_the_allocation():
    claim = _claim([])
    assert deadline(claim) == parse_time("2025-01-01T00:10:00Z")
    assert verdict(_state(timedelta(seconds=599)), [claim])[0] == "waiting"
    assert verdict(_state(timedelta(seconds=600)), [claim]) == (
        "failed", "claim c binding timeout")
    assert verdict(_state(timedelta(hours=1)), [_claim([_true("Ready")])])[0] == "ready"
