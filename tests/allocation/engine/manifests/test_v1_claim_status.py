"""A v1 claim's status as the API server checks a status update
(``manifests/v1_claim_status.py``), read through the loader."""

from __future__ import annotations

from tests.allocation.engine.manifests.v1_docs import claim_doc, problems, request

_DEVICE = {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}
_SHARE = "5f0c8c2e-3a51-5b6e-9d4f-0a1b2c3d4e5f"
_POD = {"resource": "pods", "name": "p", "uid": "u1"}
_SUBS = {"name": "p", "firstAvailable": [{"name": "s", "deviceClassName": "gpu"}]}


def _claim(results: list[dict] | None = None, **status) -> dict:
    if results is not None:
        status["allocation"] = {"devices": {"results": results}}
    return claim_doc([request("r"), _SUBS], status=status)


def _result(request_name: str = "r", **fields) -> dict:
    return {"request": request_name, **_DEVICE, **fields}


def test_a_status_an_allocation_wrote_is_valid():
    shared = _result("p/s", device="nic-0", shareID=_SHARE)
    statuses = [{**_DEVICE}, {**_DEVICE, "device": "nic-0", "shareID": _SHARE}]
    assert problems([_claim([_result(), shared], reservedFor=[_POD],
                            devices=statuses)]) == []


def test_reservations_need_an_allocation_and_distinct_pods():
    assert problems([_claim(reservedFor=[_POD])]) == [
        "status.reservedFor: may only be set when status.allocation is set (a claim is "
        "reserved for the pods using its allocation)"]
    assert problems([_claim([_result()], reservedFor=[_POD, {**_POD, "name": "q"}])]) == [
        "status.reservedFor[1].uid: 'u1' is listed twice (first at status.reservedFor[0].uid)"]


def test_a_result_names_a_request_of_the_claim():
    assert problems([_claim([_result("nope"), _result("p/t"), _result("p")])]) == [
        "status.allocation.devices.results[0].request: 'nope' names no request of this "
        "claim (requests: p, r; a subrequest is <request>/<subrequest>)",
        "status.allocation.devices.results[1].request: 'p/t' names no request of this "
        "claim (requests: p, r; a subrequest is <request>/<subrequest>)"]


def test_a_share_id_is_a_normalized_uuid():
    assert problems([_claim([_result(shareID=_SHARE.upper())])]) == [
        f"status.allocation.devices.results[0].shareID: invalid share ID {_SHARE.upper()!r}: "
        "must be a UUID in RFC 4122 normalized form (36 lower-case characters)"]


def test_allocation_config_names_requests_of_the_claim_once():
    opaque = {"driver": "gpu.example.com", "parameters": {}}
    status = {"allocation": {"devices": {"results": [_result()], "config": [
        {"source": "FromClaim", "requests": ["r", "x", "r"], "opaque": opaque}]}}}
    assert problems([claim_doc([request("r")], status=status)]) == [
        "status.allocation.devices.config[0].requests[1]: 'x' names no request of this "
        "claim (requests: r; a subrequest is <request>/<subrequest>)",
        "status.allocation.devices.config[0].requests[2]: 'r' is listed twice (first at "
        "status.allocation.devices.config[0].requests[0])"]


def test_a_device_status_is_of_an_allocated_device_once():
    other = {**_DEVICE, "device": "gpu-1"}
    shared = {**_DEVICE, "shareID": _SHARE}  # the result has no share ID
    assert problems([_claim([_result()], devices=[_DEVICE, other, shared, _DEVICE])]) == [
        "status.devices[1]: must name a device of status.allocation.devices.results "
        "(driver, pool, device and shareID)",
        "status.devices[2]: must name a device of status.allocation.devices.results "
        "(driver, pool, device and shareID)",
        "status.devices[3]: 'gpu.example.com/node-1/gpu-0' is listed twice (first at "
        "status.devices[0])"]
    assert problems([_claim(devices=[_DEVICE])]) == [
        "status.devices[0]: must name a device of status.allocation.devices.results "
        "(driver, pool, device and shareID)"]


def test_network_data_limits_and_addresses():
    def lines(**data):
        return problems([_claim([_result()], devices=[{**_DEVICE, "networkData": data}])])
    assert lines(interfaceName="e" * 256, hardwareAddress="a" * 128,
                 ips=["10.9.8.7/24", "2001:db8::1/64"]) == []
    base = "status.devices[0].networkData"
    assert lines(interfaceName="e" * 257, hardwareAddress="a" * 129) == [
        f"{base}.interfaceName: is 257 characters, longer than the limit of 256",
        f"{base}.hardwareAddress: is 129 characters, longer than the limit of 128"]
    assert lines(ips=[f"10.0.0.{i}/24" for i in range(17)]) == [
        f"{base}.ips: must have at most 16 items, not 17"]
    assert lines(ips=["10.9.8.7", "2001:DB8::1/64", "10.9.8.7/24", "10.9.8.7/24"]) == [
        f"{base}.ips[0]: invalid address '10.9.8.7': must be an address in CIDR form "
        "(10.9.8.7/24 or 2001:db8::1/64)",
        f"{base}.ips[1]: '2001:DB8::1/64' must be in canonical form ('2001:db8::1/64')",
        f"{base}.ips[3]: '10.9.8.7/24' is listed twice (first at {base}.ips[2])"]
    for text in ("nope/24", "fe80::1%eth0/64"):
        assert lines(ips=[text]) == [
            f"{base}.ips[0]: invalid address {text!r}: must be an address in CIDR form "
            "(10.9.8.7/24 or 2001:db8::1/64)"]
