"""A v1 ResourceClaim's status, checked as the API server checks a status update (spec
section 1 gives the limits; the rest is upstream's, docs/v1.md "Claim status").

A claim exported from a cluster carries the status its allocation wrote. One written by
hand may not, and the planner would then hold reservations without an allocation, results
for requests the claim does not have, or device statuses no result explains: each is a
problem naming the field, as the API server's answer would be.
"""

from __future__ import annotations

import ipaddress
import re

from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.v1_names import (
    MAX_DEVICE_DATA_BYTES,
    MAX_HARDWARE_ADDRESS,
    MAX_INTERFACE_NAME,
    MAX_IPS,
    MAX_OPAQUE_BYTES,
    check_json_size,
    check_listed_once,
    check_references,
    reference_problem,
    request_names,
)

__all__ = ["check_claim_status"]

_RESULTS = "status.allocation.devices.results"
_CONFIG = "status.allocation.devices.config"
# uuid.Validate plus upstream's "RFC 4122 normalized form": 36 lower-case characters
_SHARE_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _device_key(entry: dict) -> tuple[str, str, str, str | None]:
    return entry["driver"], entry["pool"], entry["device"], entry.get("shareID")


def _results(results: list[dict], names: dict[str, set[str]], problems: ProblemList) -> None:
    for index, result in enumerate(results):
        where = f"{_RESULTS}[{index}]"
        message = reference_problem(result["request"], names)
        if message:
            problems.add(f"{where}.request", message)
        share = result.get("shareID")
        if share is not None and not _SHARE_ID.fullmatch(share):
            problems.add(f"{where}.shareID", f"invalid share ID {share!r}: must be a UUID "
                         "in RFC 4122 normalized form (36 lower-case characters)")


def _network_data(data: dict, path: str, problems: ProblemList) -> None:
    for name, limit in (("interfaceName", MAX_INTERFACE_NAME),
                        ("hardwareAddress", MAX_HARDWARE_ADDRESS)):
        if len(data.get(name) or "") > limit:
            problems.add(f"{path}.{name}", f"is {len(data[name])} characters, longer than "
                         f"the limit of {limit}")
    ips = data.get("ips") or []
    if len(ips) > MAX_IPS:
        problems.add(f"{path}.ips", f"must have at most {MAX_IPS} items, not {len(ips)}")
        return
    for index, text in enumerate(ips):
        try:
            # Go's ParseCIDR takes neither a bare address (ip_interface: /32, /128) nor a
            # zone (fe80::1%eth0)
            if "/" not in text or "%" in text:
                raise ValueError(text)
            canonical = str(ipaddress.ip_interface(text))
        except ValueError:
            problems.add(f"{path}.ips[{index}]", f"invalid address {text!r}: must be an "
                         "address in CIDR form (10.9.8.7/24 or 2001:db8::1/64)")
            continue
        if canonical != text:
            problems.add(f"{path}.ips[{index}]", f"{text!r} must be in canonical form "
                         f"({canonical!r})")
    check_listed_once(ips, f"{path}.ips", problems)


def check_claim_status(devices: dict, status: dict, problems: ProblemList) -> None:
    """Report what is wrong with the ``status`` of a schema-valid claim whose
    ``spec.devices`` is ``devices``."""
    if not status:
        return  # nearly every claim of an input: nothing below could be reported
    names = request_names(devices)
    allocation = status.get("allocation")
    allocated = (allocation or {}).get("devices") or {}
    results = allocated.get("results") or []
    _results(results, names, problems)
    for index, config in enumerate(allocated.get("config") or ()):
        check_references(config.get("requests"), names, f"{_CONFIG}[{index}].requests",
                         problems)
        check_json_size(config["opaque"]["parameters"], MAX_OPAQUE_BYTES,
                        f"{_CONFIG}[{index}].opaque.parameters", problems)
    reserved = status.get("reservedFor") or []
    if reserved and allocation is None:
        problems.add("status.reservedFor", "may only be set when status.allocation is set "
                     "(a claim is reserved for the pods using its allocation)")
    check_listed_once([c["uid"] for c in reserved], "status.reservedFor", problems, ".uid")
    known = {_device_key(result) for result in results}
    statuses = status.get("devices") or []
    for index, device in enumerate(statuses):
        if _device_key(device) not in known:
            problems.add(f"status.devices[{index}]", "must name a device of "
                         "status.allocation.devices.results (driver, pool, device and "
                         "shareID)")
        if device.get("data") is not None:
            check_json_size(device["data"], MAX_DEVICE_DATA_BYTES,
                            f"status.devices[{index}].data", problems)
        if device.get("networkData") is not None:
            _network_data(device["networkData"], f"status.devices[{index}].networkData",
                          problems)
    check_listed_once([_device_key(d) for d in statuses], "status.devices", problems)
