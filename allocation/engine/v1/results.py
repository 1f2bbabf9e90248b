"""The written-back allocation of one claim: results, config and nodeSelector (docs/v1.md)."""

from __future__ import annotations

import uuid

from allocation.engine.objects.resource import node_selector_for
from allocation.engine.v1.errors import AllocationError

__all__ = ["SHARE_ID_NAMESPACE", "allocated_node_name", "allocation_config", "build_allocation",
           "share_id"]

# UUIDv5 namespace of share IDs: upstream draws them at random; the planner derives them
# from the claim UID and the result index so output is deterministic (docs/v1.md).
SHARE_ID_NAMESPACE = uuid.UUID("6f1d7a8e-3c1b-5f0e-9a57-0d2a4b1c9e01")


def share_id(claim_uid: str, index: int) -> str:
    """The deterministic shareID of result ``index`` of the claim with ``claim_uid``."""
    return str(uuid.uuid5(SHARE_ID_NAMESPACE, f"{claim_uid}/{index}"))


def build_allocation(claim: dict, picks: list, chosen: dict[int, int], classes: dict,
                     node_name: str, profile, config_free: bool = False) -> dict:
    """The ``status.allocation`` of ``claim`` from the search's picks.

    ``picks`` are the search's results in order; ``chosen`` maps a firstAvailable request's
    index to the chosen subrequest index; ``classes`` maps request index to the DeviceClass
    dict used. ``config_free``: the caller knows ``allocation_config`` is empty for these
    (``preflight.Plan.single_config_free``: once per plan, not per allocation).

    Raises AllocationError when a node selector cannot be built.
    """
    uid = None  # made for the first shared result only
    results = []
    for i, p in enumerate(picks):
        r = {"request": p.request_name, "driver": p.device.driver, "pool": p.device.pool,
             "device": p.device.name}
        if p.admin:
            r["adminAccess"] = True
        if profile.copy_tolerations and p.tolerations:
            r["tolerations"] = list(p.tolerations)
        if profile.binding_and_status:
            if p.device.binding_conditions:
                r["bindingConditions"] = list(p.device.binding_conditions)
            if p.device.binding_failure_conditions:
                r["bindingFailureConditions"] = list(p.device.binding_failure_conditions)
        if p.consumed is not None:
            if uid is None:
                uid = (claim.get("metadata") or {}).get("uid") or _claim_name(claim)
            r["shareID"] = share_id(uid, i)
            if p.consumed:
                # the formats upstream serializes (capacity.consumed_texts), not ours
                r["consumedCapacity"] = dict(sorted(p.consumed_text.items()))
        results.append(r)
    # ``results`` is omitempty in Go: a claim of no request is allocated ``devices: {}``
    allocation: dict = {"devices": {"results": results} if results else {}}
    config = None if config_free else allocation_config(claim, chosen, classes)
    if config:
        allocation["devices"]["config"] = config
    try:
        selector = node_selector(picks, node_name)
    except AllocationError as exc:
        meta = claim.get("metadata") or {}
        raise AllocationError(f"create NodeSelector for claim {meta.get('name', '')}: {exc}") \
            from exc
    if selector is not None:
        allocation["nodeSelector"] = selector
    return allocation


def _claim_name(claim: dict) -> str:
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def allocation_config(claim: dict, chosen: dict[int, int], classes: dict) -> list[dict]:
    """The allocation's ``devices.config``: the classes' config, then the claim's, for the
    requests (``chosen`` subrequests) served by ``classes`` (request index -> DeviceClass)."""
    if not claim["spec"]["devices"].get("config"):
        for c in classes.values():  # a loop, not any(): asked for every allocation
            if c is not None and (c.get("spec") or {}).get("config"):
                break
        else:
            return []  # nothing to copy (the usual case)
    requests = claim["spec"]["devices"].get("requests") or ()
    out: list[dict] = []
    ranges: dict[str, tuple[int, int]] = {}
    for ri, req in enumerate(requests):
        name = req["name"]
        if ri in chosen:
            name = f"{name}/{req['firstAvailable'][chosen[ri]]['name']}"
        cls = classes.get(ri)
        if cls is None:
            continue
        cname = cls["metadata"]["name"]
        if cname in ranges:
            start, end = ranges[cname]
            for i in range(start, end):
                out[i]["requests"].append(name)
            continue
        start = len(out)
        for c in (cls.get("spec") or {}).get("config") or ():
            entry = {"source": "FromClass", "requests": [name]}
            entry.update({k: v for k, v in c.items() if k != "requests"})
            out.append(entry)
        ranges[cname] = (start, len(out))
    for c in claim["spec"]["devices"].get("config") or ():
        body = {k: v for k, v in c.items() if k != "requests"}
        names = c.get("requests") or []
        if not names:
            out.append({"source": "FromClaim", **body})
            continue
        # one copy per matching request: the 1.34-1.36 duplication quirk (docs/v1.md)
        for ri, req in enumerate(requests):
            if req["name"] in names:
                out.append({"source": "FromClaim", "requests": list(names), **body})
                continue
            if ri in chosen:
                sub = f"{req['name']}/{req['firstAvailable'][chosen[ri]]['name']}"
                if sub in names:
                    out.append({"source": "FromClaim", "requests": list(names), **body})
    return out


def node_selector(picks: list, node_name: str) -> dict | None:
    """The allocation's node selector (docs/v1.md, allocation nodeSelector).

    Raises AllocationError for a selector with several terms, as upstream does.
    """
    fields: list[dict] = []
    exprs: list[dict] = []
    for p in picks:
        if p.device.node_local:
            # the seed's selector of the node, one per node and shared by the allocations
            # on it (never changed in place: clone.own_parts)
            return node_selector_for(node_name)
        selector = p.device.node_selector
        if selector is not None:
            terms = selector.get("nodeSelectorTerms") or []
            if len(terms) > 1:
                raise AllocationError(f"unsupported ResourceSlice.NodeSelector with "
                                      f"{len(terms)} terms")
            if terms:
                _merge(terms[0].get("matchFields") or (), fields)
                _merge(terms[0].get("matchExpressions") or (), exprs)
    if not fields and not exprs:
        return None
    term: dict = {}
    if exprs:
        term["matchExpressions"] = exprs
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _merge(source, target: list[dict]) -> None:
    for req in source:
        values = set(req.get("values") or ())
        if not any(t["key"] == req["key"] and t["operator"] == req["operator"]
                   and set(t.get("values") or ()) == values for t in target):
            target.append(req)


def allocated_node_name(allocation: dict | None) -> str | None:
    """The one node a written allocation is bound to (``node_selector``'s node-local form,
    ``metadata.name In [node]``), or None for a network-attached or unallocated claim."""
    terms = ((allocation or {}).get("nodeSelector") or {}).get("nodeSelectorTerms") or []
    if len(terms) != 1 or terms[0].get("matchExpressions"):
        return None
    fields = terms[0].get("matchFields") or []
    if len(fields) == 1 and fields[0].get("key") == "metadata.name" and \
            fields[0].get("operator") == "In" and len(fields[0].get("values") or ()) == 1:
        return fields[0]["values"][0]
    return None
