"""The claims and requests of one Allocate call, prepared for the search (docs/v1.md).

``ClaimState`` holds one claim's prepared requests (``RequestData``: a request or a
firstAvailable subrequest with its class, selectors, mode and capacity requests), its
constraints and the devices picked so far (``Pick``); ``search.Search`` fills them.
"""

from __future__ import annotations

from collections.abc import Mapping

from allocation.engine.quantity import quantity_format
from allocation.engine.v1.devices import quantity_value

__all__ = ["ClaimState", "Pick", "RequestData", "claim_key"]


def claim_key(claim: Mapping) -> str:
    """``namespace/name`` of a claim, as upstream's klog.KObj prints it."""
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _owner(key: str) -> str:
    """What a request selector's error names a claim by (``ClaimState.owner``)."""
    return f"claim {key}"


class Pick:
    """One device picked for one request (or subrequest) of one claim."""

    __slots__ = ("request_name", "device", "admin", "tolerations", "consumed", "consumed_text")

    def __init__(self, request_name, device, admin, tolerations, consumed,
                 consumed_text=None) -> None:
        self.request_name = request_name
        self.device = device
        self.admin = admin
        self.tolerations = tolerations
        self.consumed = consumed  # dict for shared (multi-allocatable) results, else None
        self.consumed_text = consumed_text  # the same amounts as upstream writes them


class RequestData:
    """A request or subrequest, prepared for the search."""

    __slots__ = ("name", "parent", "result_name", "klass", "class_selectors", "selectors",
                 "all_mode", "num_devices", "all_devices", "admin", "tolerations", "capacity",
                 "capacity_formats")

    def __init__(self, body: dict, parent: str | None) -> None:
        self.name = body["name"]
        self.parent = parent
        # the name results carry (``parent/name`` for a subrequest): made once, not per
        # device picked
        self.result_name = f"{parent}/{self.name}" if parent else self.name
        self.all_mode = body.get("allocationMode", "ExactCount") == "All"
        self.admin = bool(body.get("adminAccess"))
        self.tolerations = body.get("tolerations") or ()
        reqs = (body.get("capacity") or {}).get("requests")
        self.capacity = ({k: quantity_value(v) for k, v in reqs.items()}
                         if reqs is not None else None)
        self.capacity_formats = {k: quantity_format(v) for k, v in (reqs or {}).items()}
        self.num_devices = 0 if self.all_mode else int(body.get("count", 1))
        self.all_devices: list = []
        self.klass = None
        self.class_selectors: list = []
        self.selectors: list = []


class ClaimState:
    """One claim during one call: its prepared requests, constraints and picks."""

    __slots__ = ("raw", "key", "owner", "requests", "data", "constraints", "picks", "chosen",
                 "subs", "kinds")

    def __init__(self, raw: dict) -> None:
        self.raw = raw
        self.key = claim_key(raw)
        self.owner = _owner(self.key)
        self.requests = raw["spec"]["devices"].get("requests") or []
        self.data: dict[tuple[int, int], RequestData] = {}
        self.subs: dict[int, int] = {}  # request index -> number of subrequests
        self.constraints: list = []
        self.picks: list[Pick] = []
        self.chosen: dict[int, int] = {}
        # (only normal ExactCount requests, any request, any All request): set by the
        # preflight (``preflight.Plan``)
        self.kinds: tuple[bool, bool, bool] = (True, False, False)

    def fresh(self, raw: dict | None = None) -> ClaimState:
        """The same claim and prepared requests (shared) for another call: no picks, no
        choices, no constraints (``preflight.Plan.fresh`` gives it new ones). ``raw``:
        another claim of the very same spec object, prepared alike
        (``preflight.Plan.for_claims``)."""
        twin = ClaimState.__new__(ClaimState)
        if raw is None or raw is self.raw:
            twin.raw, twin.key, twin.owner = self.raw, self.key, self.owner
        else:
            twin.raw = raw
            twin.key = claim_key(raw)
            twin.owner = _owner(twin.key)
        twin.requests, twin.data, twin.subs = self.requests, self.data, self.subs
        twin.kinds = self.kinds
        twin.constraints, twin.picks, twin.chosen = [], [], {}
        return twin
