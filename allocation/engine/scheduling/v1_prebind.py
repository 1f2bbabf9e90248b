"""Binding conditions in v1 scheduling: kube-scheduler's DRA PreBind wait (KEP-5007; spec
section 3.8; docs/v1.md, "Simulating v1").

With DRADeviceBindingConditions and DRAResourceClaimDeviceStatus on, a result of a device
with ``bindingConditions`` copies them (and ``bindingFailureConditions``); every claim the
pod reserves gets ``allocationTimestamp`` (unless it has one: ``bindClaim``), and the pod
is bound only when every binding condition is True in the claim's
``status.devices[].conditions``. Until then the pod waits, reserved, with
``status.nominatedNodeName``. A True failure condition, or :data:`BINDING_TIMEOUT` after
``allocationTimestamp`` on the virtual clock, ends the wait: the pod's reservation is
dropped and the pod is tried again; that attempt finds the claim unavailable, and
PostFilter deallocates it when no other pod holds it (``v1_postfilter.py``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from allocation.engine.events import parse_time

if TYPE_CHECKING:
    from allocation.engine.objects import Pod, ResourceClaimV1
    from allocation.engine.state import ClusterState

__all__ = ["BINDING_TIMEOUT", "PREBIND_ERROR", "waits", "stamp", "stamp_reserved", "verdict",
           "deadline", "unavailable", "unreserve"]

BINDING_TIMEOUT = timedelta(seconds=600)
"""Upstream's default wait for binding conditions (``BindingTimeoutDefaultSeconds``)."""

PREBIND_ERROR = 'running PreBind plugin "DynamicResources": '
"""How kube-scheduler prefixes a PreBind plugin's error in the pod's condition."""


def waits(claim: ResourceClaimV1) -> bool:
    """Whether the claim's allocation has results with binding conditions (read in place,
    not through ``claim.results``' copy: asked for every claim of every pod bound)."""
    if claim.allocation is None:
        return False
    for result in (claim.allocation.get("devices") or {}).get("results") or ():
        if result.get("bindingConditions"):
            return True
    return False


def stamp(state: ClusterState, allocation: dict) -> bool:
    """Set ``allocationTimestamp`` (now) on a new allocation, as kube-scheduler's
    ``bindClaim`` does for every claim it reserves with the binding gates on (those with
    binding conditions or not).

    Returns:
        Whether it has binding conditions: ``waits`` of its claim.
    """
    allocation["allocationTimestamp"] = state.clock.stamp()
    # a plain loop, not any() over a generator: asked for every allocation made
    for result in (allocation.get("devices") or {}).get("results") or ():
        if result.get("bindingConditions"):
            return True
    return False


def stamp_reserved(state: ClusterState, claim: ResourceClaimV1) -> ResourceClaimV1 | None:
    """Stamp a claim allocated before that a pod now reserves, if it has no
    ``allocationTimestamp`` (an allocation read from the input): ``bindClaim`` stamps every
    claim it reserves, so its binding conditions' timeout runs from now.

    Returns:
        The claim's writable version when it was stamped, else None.
    """
    allocation = claim.allocation
    if allocation is None or allocation.get("allocationTimestamp"):
        return None
    claim = state.writable(claim)
    claim.allocation = {**allocation, "allocationTimestamp": state.clock.stamp()}
    return claim
def deadline(claim: ResourceClaimV1) -> datetime | None:
    """When the claim's wait for binding conditions times out, if it waits."""
    started = (claim.allocation or {}).get("allocationTimestamp")
    if not started or not waits(claim):
        return None
    return parse_time(started) + BINDING_TIMEOUT


def _conditions(claim: ResourceClaimV1, result: dict) -> dict[str, dict]:
    """The conditions of the result's device: the first status entry of its driver, pool
    and device, as upstream's ``getAllocatedDeviceStatus`` reads it (a ``shareID`` is
    not compared, though the API keys statuses by it too: docs/v1.md)."""
    for status in claim.device_statuses:
        if (status.get("driver"), status.get("pool"), status.get("device")) == (
                result["driver"], result["pool"], result["device"]):
            return {c.get("type"): c for c in status.get("conditions") or ()}
    return {}


def verdict(state: ClusterState, claims: list[ResourceClaimV1]) -> tuple[str, str | None]:
    """``("ready", None)``, ``("waiting", None)`` or ``("failed", why)`` for the pod whose
    allocated ``claims`` these are: a True failure condition or the timeout, in upstream's
    ``isClaimReadyForBinding``/``isPodReadyForBinding`` words. As upstream's poll, the
    first claim not ready ends the reading."""
    for claim in claims:
        answer, why = _claim_verdict(state, claim)
        if answer != "ready":
            return answer, why
    return "ready", None


def unavailable(state: ClusterState, claim: ResourceClaimV1) -> bool:
    """Whether an allocated claim's binding failed or timed out, so that kube-scheduler's
    Filter finds it unavailable on every node (``resourceclaim not available on the
    node``) and PostFilter may deallocate it (``v1_postfilter.py``)."""
    return waits(claim) and _claim_verdict(state, claim)[0] == "failed"


def _claim_verdict(state: ClusterState, claim: ResourceClaimV1) -> tuple[str, str | None]:
    """``isClaimReadyForBinding`` then ``isClaimTimeout``: results in order, the first one
    not ready ends the reading (a failure condition of a later result is not seen)."""
    ready = True
    for result in claim.results:
        if not result.get("bindingConditions"):
            continue
        conditions = _conditions(claim, result)
        for name in result.get("bindingFailureConditions") or ():
            failed = conditions.get(name)
            if failed is not None and failed.get("status") == "True":
                return "failed", (f"claim {claim.name} binding failed: "
                                  f"reason={failed.get('reason', '')}, "
                                  f"message=\"{failed.get('message', '')}\"")
        if not all((conditions.get(n) or {}).get("status") == "True"
                   for n in result["bindingConditions"]):
            ready = False
            break
    if ready:
        return "ready", None
    due = deadline(claim)
    if due is not None and state.clock.now >= due:
        return "failed", f"claim {claim.name} binding timeout"
    return "waiting", None


def unreserve(state: ClusterState, claim: ResourceClaimV1, pod: Pod) -> None:
    """Drop the pod's reservation of a claim whose binding failed, as kube-scheduler's
    Unreserve does after PreBind's error. The allocation stays (bindClaim wrote it): the
    next attempt finds the claim unavailable and PostFilter deallocates it when no other
    pod holds it (``v1_postfilter.py``)."""
    claim = state.writable(claim)
    claim.reserved_for = [r for r in claim.reserved_for if r.get("uid") != pod.meta.uid]
