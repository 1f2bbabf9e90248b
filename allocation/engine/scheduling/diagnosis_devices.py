"""How each dialect's request entries (the explain annotation's ``requests``) read as the
diagnosis's ``devices`` items (``diagnosis.py``, docs/manifests.md "The explanation"):
``SeedDevices`` for the seed dialect, ``V1Devices`` for resource.k8s.io/v1."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from allocation.engine.allocator import explain_node
from allocation.engine.scheduling import v1_postfilter
from allocation.engine.scheduling.reasons import CLAIM_REASONS
from allocation.engine.v1 import INVALID_POOLS, TIMED_OUT

if TYPE_CHECKING:
    from allocation.engine.objects import Pod, ResourceClaimV1
    from allocation.engine.scheduling.needs import PodNeeds
    from allocation.engine.scheduling.v1_explain import RequestMemo
    from allocation.engine.state import ClusterState
    from allocation.engine.v1 import Allocator

__all__ = ["Devices", "SeedDevices", "V1Devices", "shortfall"]


class Devices(Protocol):
    """One dialect's request entries (the annotation's ``requests``) read as diff items."""

    explained: frozenset[str]
    """The node reasons whose request entries say why (the claims, not the node)."""

    def entries(self, node: str) -> list[dict]:
        """The request entries of ``node`` (for nodes the annotation does not detail)."""

    def items(self, entries: list[dict]) -> list[dict]:
        """The ``devices`` items of one node's request entries."""

    def unready(self) -> list[str]:
        """The pod's allocated claims whose binding failed or timed out (unavailable on
        every node: v1 with the binding gates; none in the seed dialect)."""


class SeedDevices:
    """The seed dialect's entries (``allocator.explain_node``): one per required device,
    named by its claim and driver; alike ones (same class, driver and selectors) merge."""

    explained = frozenset(CLAIM_REASONS)

    def __init__(self, state: ClusterState, needs: PodNeeds, strategy: str) -> None:
        self._state, self._needs, self._strategy = state, needs, strategy
        self._classes = {claim.ref: claim.class_name for claim, _plan in needs.pending}

    def entries(self, node: str) -> list[dict]:
        return explain_node(self._state.inventory_index, node, self._needs.wants,
                            self._strategy)

    def unready(self) -> list[str]:
        return []

    def items(self, entries: list[dict]) -> list[dict]:
        groups: dict[tuple, dict] = {}
        for entry in entries:
            klass = self._classes.get(entry.get("claim"), "")
            key = (klass, entry.get("driver"), tuple(entry.get("selectors") or ()))
            item = groups.get(key)
            if item is None:
                free = 0 if entry.get("problem") else len(entry.get("matching") or ())
                groups[key] = {"check": "devices", "class": klass, "wants": 1, "free": free,
                               "request": str(entry.get("request", "")).split(".required")[0]}
            else:
                item["wants"] += 1
        return list(groups.values())


class V1Devices:
    """The resource.k8s.io/v1 entries (``v1_explain.request_entry``): one per request or
    subrequest, ``matching`` bounded with ``matchingMore``. A request wants its ``count``
    (``"all"`` for allocationMode All); of a request's subrequests the one short by the
    least stands for it; alike requests (same class and selectors) merge."""

    explained = frozenset((*CLAIM_REASONS, INVALID_POOLS, TIMED_OUT))

    def __init__(self, state: ClusterState, pod: Pod, allocator: Allocator,
                 claims: list[ResourceClaimV1], memo: RequestMemo | None) -> None:
        self._state, self._allocator, self._claims, self._memo = state, allocator, claims, memo
        self._pod = pod
        self._wants: dict[tuple[str, str], int | str] = {}
        for claim in claims:
            for request in claim.requests:
                if request.exactly is not None:
                    self._wants[(claim.ref, request.name)] = _count(request.exactly)
                for sub in request.first_available:
                    self._wants[(claim.ref, f"{request.name}/{sub.get('name')}")] = _count(sub)

    def entries(self, node: str) -> list[dict]:
        """The node's entries from the scheduler's memo (``V1Devices`` made without one
        reads only entries it is given)."""
        return self._memo.requests(self._state, self._allocator, self._claims, node)[0]

    def unready(self) -> list[str]:
        binding = self._allocator.profile.binding_and_status
        return [c.ref for c in self._claims if c.allocated and v1_postfilter.binding_unready(
            self._state, self._pod, c, binding)]

    def items(self, entries: list[dict]) -> list[dict]:
        chosen: dict[tuple, tuple[dict, tuple]] = {}
        for entry in entries:
            name = str(entry.get("request", ""))
            item = {"check": "devices", "class": entry.get("class", ""), "request": name,
                    "wants": self._wants.get((entry.get("claim"), name), 1),
                    "free": len(entry.get("matching") or ()) + _int(entry.get("matchingMore"))}
            key = (entry.get("claim"), name.split("/")[0])
            known = chosen.get(key)
            if known is None or shortfall(item) < shortfall(known[0]):
                chosen[key] = (item, tuple(entry.get("selectors") or ()))
        merged: dict[tuple, dict] = {}
        for item, selectors in chosen.values():
            key = (item["class"], selectors)
            same = merged.get(key)
            if same is None:
                merged[key] = item
            else:
                same["wants"] = ("all" if "all" in (same["wants"], item["wants"])
                                 else same["wants"] + item["wants"])
        return list(merged.values())


def _count(body: dict) -> int | str:
    if body.get("allocationMode") == "All":
        return "all"
    return _int(body.get("count", 1)) or 1


def _int(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def shortfall(item: dict) -> int:
    """How many devices a ``devices`` item lacks (an ``all`` request lacks at least one)."""
    wants = item["wants"]
    return 1 if wants == "all" else max(wants - item["free"], 0)
