"""Names and limits of the resource.k8s.io/v1 kinds (spec section 1, docs/v1.md).

One home for the v1 naming rules (driver, pool, QualifiedName, FullyQualifiedName) and the
numeric limits of the v1 API types, so the schema, the cross-field rules and their messages
agree. The seed rule "identifiers of at most 63 characters" does not apply to v1.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.schema import DNS_SUBDOMAIN, join

__all__ = [
    "DRIVER_NAME", "POOL_NAME", "qualified_name_problem", "check_qualified_keys",
    "qualified_keys",
    "MAX_SELECTORS", "MAX_CONFIGS", "MAX_OPAQUE_BYTES", "MAX_DEVICES", "MAX_DEVICES_TAINTED",
    "MAX_COUNTER_SETS", "MAX_COUNTERS", "MAX_ATTRIBUTES_AND_CAPACITIES", "MAX_STRING_LENGTH",
    "MAX_CONSUMES_COUNTERS", "MAX_BINDING_CONDITIONS", "MAX_REQUESTS", "MAX_SUBREQUESTS",
    "MAX_TOLERATIONS", "MAX_CONSTRAINTS", "MAX_RESERVED_FOR",
    "MAX_ALLOCATION_CONFIGS", "MAX_DEVICE_CONDITIONS", "MAX_DEVICE_DATA_BYTES",
    "MAX_VALID_VALUES", "MAX_ID_LENGTH", "MAX_DOMAIN_LENGTH", "MAX_INTERFACE_NAME",
    "MAX_HARDWARE_ADDRESS", "MAX_IPS", "request_names", "reference_problem",
    "check_references", "check_listed_once", "check_json_size",
]

MAX_SELECTORS = 32
MAX_CONFIGS = 32
MAX_OPAQUE_BYTES = 10 * 1024
MAX_DEVICES = 128
MAX_DEVICES_TAINTED = 64
"""Devices of a slice when any device has taints or consumesCounters."""
MAX_COUNTER_SETS = 8
MAX_COUNTERS = 32
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_STRING_LENGTH = 64
"""Characters of a string or version attribute."""
MAX_CONSUMES_COUNTERS = 2
MAX_BINDING_CONDITIONS = 4
MAX_REQUESTS = 32
MAX_SUBREQUESTS = 8
MAX_TOLERATIONS = 16
MAX_CONSTRAINTS = 32
MAX_RESERVED_FOR = 256
MAX_ALLOCATION_CONFIGS = 64
MAX_DEVICE_CONDITIONS = 8
MAX_DEVICE_DATA_BYTES = 10 * 1024
MAX_INTERFACE_NAME = 256
"""Characters of a device status's ``networkData.interfaceName``."""
MAX_HARDWARE_ADDRESS = 128
MAX_IPS = 16
MAX_VALID_VALUES = 10
MAX_ID_LENGTH = 32
MAX_DOMAIN_LENGTH = 63

DRIVER_NAME = (
    DNS_SUBDOMAIN[0], 63,
    "must be a driver name: a lower-case DNS subdomain of at most 63 characters",
)
_SUB = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
POOL_NAME = (
    re.compile(rf"^{_SUB}(/{_SUB})*$"), 253,
    "must be a pool name: DNS subdomains joined by '/', at most 253 characters",
)
_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@lru_cache(maxsize=4096)  # every device of a cluster names the same few attributes
def qualified_name_problem(name: str, full: bool = False) -> str | None:
    """Why ``name`` is not a v1 QualifiedName (``id`` or ``domain/id``; with ``full``, a
    FullyQualifiedName, which must carry the domain), or None. The id is a C identifier of
    at most 32 characters, the domain a DNS subdomain of at most 63.

    Returns:
        The problem's message, or None for a valid name; the answer depends on the text
        alone, so it is remembered per name.
    """
    domain, slash, ident = name.rpartition("/")
    if full and not slash:
        return (f"invalid name {name!r}: a fully qualified name must be <domain>/<id> "
                "(the domain is required)")
    if slash and (len(domain) > MAX_DOMAIN_LENGTH or not DNS_SUBDOMAIN[0].match(domain)):
        return (f"invalid name {name!r}: the domain {domain!r} must be a DNS subdomain of at "
                f"most {MAX_DOMAIN_LENGTH} characters")
    if len(ident) > MAX_ID_LENGTH or not _C_IDENTIFIER.match(ident):
        return (f"invalid name {name!r}: the id {ident!r} must be a C identifier "
                f"([A-Za-z_][A-Za-z0-9_]*) of at most {MAX_ID_LENGTH} characters")
    return None


def qualified_keys(value: Any) -> bool:
    """Whether every key of the map ``value`` is a QualifiedName (``check_qualified_keys``
    finds no problem)."""
    # every device of a cluster names the same few keys: one set operation for the lot
    if _QUALIFIED.issuperset(value):
        return True
    for key in value:
        if qualified_name_problem(key) is not None:
            return False
        if len(_QUALIFIED) < _QUALIFIED_KEPT:
            _QUALIFIED.add(key)
    return True


_QUALIFIED: set[str] = set()
"""Keys found to be QualifiedNames (the answer depends on the text alone)."""
_QUALIFIED_KEPT = 4096


def check_qualified_keys(value: Any, path: str, problems: ProblemList) -> None:
    """Every key of the map ``value`` is a QualifiedName (attributes, capacities)."""
    for key in value:
        message = qualified_name_problem(key)
        if message:
            problems.add(join(path, key), message)


def check_json_size(value: Any, limit: int, path: str, problems: ProblemList) -> None:
    """``value`` (opaque parameters, device-status data) is at most ``limit`` bytes of
    JSON."""
    size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
    if size > limit:
        problems.add(path, f"is {size} bytes of JSON, more than the limit of {limit} bytes")


def request_names(devices: dict) -> dict[str, set[str]]:
    """Each request of a claim's ``spec.devices`` with the names of its subrequests."""
    return {request["name"]: {sub["name"] for sub in request.get("firstAvailable") or ()}
            for request in devices.get("requests") or ()}


def reference_problem(ref: str, names: dict[str, set[str]]) -> str | None:
    """Why ``ref`` (``req`` or ``req/sub``) names no request of a claim whose
    :func:`request_names` are ``names``, or None."""
    request, slash, sub = ref.partition("/")
    if request in names and (not slash or sub in names[request]):
        return None
    known = ", ".join(sorted(names)) or "none"
    return (f"{ref!r} names no request of this claim (requests: {known}; a subrequest is "
            "<request>/<subrequest>)")


def check_listed_once(values: Iterable[Any], path: str, problems: ProblemList,
                      suffix: str = "") -> None:
    """Each of ``values`` (the items of the list at ``path``) appears once, as the API
    server's sets require (``suffix``: the field of an item the value is, ``.uid``)."""
    first: dict[Any, int] = {}
    for index, value in enumerate(values):
        if first.setdefault(value, index) != index:
            shown = value if isinstance(value, str) else "/".join(
                str(part) for part in value if part is not None)
            problems.add(f"{path}[{index}]{suffix}", f"{shown!r} is listed twice (first at "
                         f"{path}[{first[value]}]{suffix})")


def check_references(refs: list | None, names: dict[str, set[str]], path: str,
                     problems: ProblemList) -> None:
    """A constraint's or config's ``requests``: each names a request of the claim, once."""
    for index, ref in enumerate(refs or ()):
        message = reference_problem(ref, names)
        if message:
            problems.add(f"{path}[{index}]", message)
    check_listed_once(refs or (), path, problems)
