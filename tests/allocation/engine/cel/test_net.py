"""Kubernetes' IP and CIDR libraries in resource.k8s.io/v1 device selectors
(allocation/engine/cel/_net.py, declared by _library.py).

Every expected value and message here was checked against upstream's own DRA cel package
(k8s.io/dynamic-resource-allocation cel, k8s.io/apiserver pkg/cel/library ip.go and cidr.go
at v0.34.9, v0.35.6 and v0.36.2, Go 1.27 netip) with /work/harness/celhar; docs/cel.md
("IP and CIDR") records the comparison.
"""

from __future__ import annotations

import pytest

from allocation.engine.cel import compile_device_selector
from allocation.engine.cel._net import cidr_text, ip_text
from tests.allocation.engine.cel.device_helpers import compile_error, runtime_error, value

NET = "net.example.com"
NET_DEVICE = {"name": "nic-0", "attributes": {
    "ip": {"string": "10.1.2.3"}, "ip6": {"string": "fe80::1"}, "subnet": {"string": "10.0.0.0/8"},
    "port": {"int": 1}}}


@pytest.mark.parametrize(("text", "canonical"), [
    ("1.2.3.4", "1.2.3.4"),
    ("::0001", "::1"),
    ("FE80::ABCD", "fe80::abcd"),
    ("fe80:0:0:0:0:0:0:1", "fe80::1"),
    ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),  # the first of two equal zero runs
    ("1:0:0:2:0:0:0:3", "1:0:0:2::3"),  # the longest run
    ("0:1:0:1:0:1:0:1", "0:1:0:1:0:1:0:1"),  # a single zero group stays
    ("::1.2.3.4", "::102:304"),  # IPv4-compatible is no IPv4-mapped: hex, as Go prints it
    ("64:ff9b::1.2.3.4", "64:ff9b::102:304"),
])
def test_ip_text_is_go_addr_string(text: str, canonical: str) -> None:
    assert ip_text(text) == canonical
    assert value(f'string(ip("{text}")) == "{canonical}"')


@pytest.mark.parametrize(("text", "canonical"), [
    ("10.0.0.1/8", "10.0.0.1/8"),  # the address as given, not masked
    ("2001:DB8::/32", "2001:db8::/32"),
    ("2001:db8:0:0::/64", "2001:db8::/64"),
    ("::1.2.3.4/100", "::102:304/100"),
])
def test_cidr_text_is_go_prefix_string(text: str, canonical: str) -> None:
    assert cidr_text(text) == canonical
    assert value(f'string(cidr("{text}")) == "{canonical}"')


@pytest.mark.parametrize(("expression", "expected"), [
    ('ip("1.2.3.4") == ip("1.2.3.4")', True),
    ('ip("::1") == ip("0:0:0:0:0:0:0:1")', True),
    ('ip("1.2.3.4") != ip("1.2.3.5")', True),
    ('cidr("10.0.0.1/8") == cidr("10.0.0.0/8")', False),  # Prefix == compares the address
    ('cidr("10.0.0.1/8").masked() == cidr("10.0.0.0/8")', True),
    ('cidr("10.0.0.1/8").ip() == ip("10.0.0.1")', True),
    ('ip("1.2.3.4") in [ip("1.2.3.4")]', True),
    ('type(ip("1.2.3.4")) == net.IP && type(cidr("1.2.3.4/8")) == net.CIDR', True),
    ('ip("127.0.0.1").family() == 4 && ip("::1").family() == 6', True),
    ('isIP("1.2.3.4") && isIP("::1")', True),
    ('isIP("01.2.3.4") || isIP("::ffff:1.2.3.4") || isIP("fe80::1%eth0") || isIP("x")', False),
    ('ip.isCanonical("2001:db8::2:1") && ip.isCanonical("127.0.0.1")', True),
    ('ip.isCanonical("2001:DB8::2:1") || ip.isCanonical("::0001")', False),
    ('ip("0.0.0.0").isUnspecified() && ip("::").isUnspecified()', True),
    ('ip("127.255.0.1").isLoopback() && ip("::1").isLoopback()', True),
    ('ip("::2").isLoopback()', False),
    ('ip("224.0.0.1").isLinkLocalMulticast() && ip("ff02::1").isLinkLocalMulticast()', True),
    ('ip("ff12::2").isLinkLocalMulticast()', True),  # netip masks the flags: ff0f == ff02
    ('ip("224.0.1.1").isLinkLocalMulticast() || ip("ff01::1").isLinkLocalMulticast()', False),
    ('ip("169.254.1.1").isLinkLocalUnicast() && ip("febf::1").isLinkLocalUnicast()', True),
    ('ip("fec0::1").isLinkLocalUnicast()', False),
    ('ip("10.0.0.1").isGlobalUnicast() && ip("2001:db8::1").isGlobalUnicast()', True),
    ('ip("255.255.255.255").isGlobalUnicast() || ip("239.1.1.1").isGlobalUnicast()', False),
    ('ip("0.0.0.1").isGlobalUnicast()', True),
    ('isCIDR("10.0.0.0/8") && isCIDR("::/0")', True),
    ('isCIDR("10.0.0.1/08") || isCIDR("10.0.0.1/+8") || isCIDR("1.2.3.4/255.0.0.0")', False),
    ('isCIDR("10.0.0.0") || isCIDR("::/129") || isCIDR("::ffff:1.2.3.4/96")', False),
    ('cidr("10.0.0.0/8").prefixLength() == 8', True),
    ('cidr("10.0.0.1/8").containsIP("10.255.0.1") && cidr("10.0.0.1/8").containsIP(ip("10.1.2.3"))',
     True),
    ('cidr("10.0.0.0/8").containsIP("11.0.0.1")', False),
    ('cidr("::/0").containsIP("1.2.3.4") || cidr("0.0.0.0/0").containsIP("::1")', False),
    ('cidr("2001:db8::1/32").containsIP("2001:db8:1::1")', True),
    ('cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16") && '
     'cidr("10.0.0.0/8").containsCIDR("10.0.0.1/8")', True),
    ('cidr("10.0.0.0/8").containsCIDR(cidr("10.0.0.0/7"))', False),
    ('cidr("::/0").containsCIDR("0.0.0.0/0")', False),
    ('cidr("10.0.0.0/8").containsIP(dyn("10.1.2.3")) && '
     'cidr("10.0.0.0/8").containsIP(dyn(ip("10.1.2.3")))', True),
    ('[ip("1.2.3.4")].map(x, string(x))[0] == "1.2.3.4"', True),
    ('string(dyn(cidr("1.2.3.4/8"))) == "1.2.3.4/8"', True),
])
def test_ip_and_cidr_functions(expression: str, expected: bool) -> None:
    assert value(expression) is expected


def test_selectors_read_addresses_from_device_attributes() -> None:
    selector = compile_device_selector(
        f'cidr(device.attributes["{NET}"].subnet).containsIP(device.attributes["{NET}"].ip) '
        f'&& ip(device.attributes["{NET}"].ip6).isLinkLocalUnicast()')
    assert selector.matches(NET, NET_DEVICE)
    elsewhere = {**NET_DEVICE, "attributes": {**NET_DEVICE["attributes"],
                                              "ip": {"string": "11.0.0.1"}}}
    assert not selector.matches(NET, elsewhere)


# Upstream's messages, which embed Go's netip errors (the parse of Go 1.27's netip).
@pytest.mark.parametrize(("expression", "message"), [
    ('ip("::ffff:1.2.3.4").family() == 4',
     'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'),
    ('ip("fe80::1%eth0").family() == 6',
     'IP address "fe80::1%eth0" with zone value is not allowed'),
    ('ip("01.2.3.4").family() == 4', 'IP Address "01.2.3.4" parse error during conversion from '
     'string: ParseAddr("01.2.3.4"): IPv4 field has octet with leading zero'),
    ('ip("x").family() == 4', 'IP Address "x" parse error during conversion from string: '
     'ParseAddr("x"): unable to parse IP'),
    ('ip("1.2.3.٤").family() == 4', 'ParseAddr("1.2.3.٤"): unexpected character (at "٤")'),
    ('ip("1.2.3.4\\n").family() == 4', 'ParseAddr("1.2.3.4\\n"): unexpected character (at "\\n")'),
    ('ip("1..2.3").family() == 4',
     'ParseAddr("1..2.3"): IPv4 field must have at least one digit (at ".2.3")'),
    ('ip("1:2:3:4:5:6:7:1.2.3.4").family() == 6', 'ParseAddr("1:2:3:4:5:6:7:1.2.3.4"): embedded '
     'IPv4 address must replace the final 2 fields of the address (at "1.2.3.4")'),
    ('ip("12345::").family() == 6',
     'ParseAddr("12345::"): each group must have 4 or less digits (at "12345::")'),
    ('ip("1::2::3").family() == 6', 'ParseAddr("1::2::3"): multiple :: in address (at ":3")'),
    ('ip("1:2:3:4:5:6:7").family() == 6', 'ParseAddr("1:2:3:4:5:6:7"): address string too short'),
    ('ip("1:2:3:4:5:6:7:8::").family() == 6',
     'ParseAddr("1:2:3:4:5:6:7:8::"): the :: must expand to at least one field of zeros'),
    ('ip("fe80::1%").family() == 6', 'ParseAddr("fe80::1%"): zone must be a non-empty string'),
    ('ip("%eth0").family() == 6', 'ParseAddr("%eth0"): missing IPv6 address'),
    ('ip.isCanonical("x")', 'ParseAddr("x"): unable to parse IP'),
    ('cidr("x").prefixLength() == 1', "network address parse error during conversion from "
     "string: network address parse error during conversion from string: "
     "netip.ParsePrefix(\"x\"): no '/'"),
    ('cidr("1.2.3.4/33").prefixLength() == 1',
     'netip.ParsePrefix("1.2.3.4/33"): prefix length out of range'),
    ('cidr("10.0.0.1/08").prefixLength() == 1',
     'netip.ParsePrefix("10.0.0.1/08"): bad bits after slash: "08"'),
    ('cidr("10.0.0.0/99999999999999999999").prefixLength() == 1',
     'bad bits after slash: "99999999999999999999"'),
    ('cidr("x/8").prefixLength() == 1',
     'netip.ParsePrefix("x/8"): ParseAddr("x"): unable to parse IP'),
    ('cidr("fe80::1%eth0/64").prefixLength() == 1',
     'netip.ParsePrefix("fe80::1%eth0/64"): IPv6 zones cannot be present in a prefix'),
    ('cidr("::ffff:1.2.3.4/120").prefixLength() == 1', "network address parse error during "
     'conversion from string: IPv4-mapped IPv6 address "::ffff:1.2.3.4/120" is not allowed'),
    ('cidr("10.0.0.0/8").containsCIDR("x")', "netip.ParsePrefix(\"x\"): no '/'"),
])
def test_errors_are_upstreams(expression: str, message: str) -> None:
    assert message in runtime_error(expression)


def test_contains_ip_of_an_unparsable_string_is_no_such_overload_as_upstream() -> None:
    # cidr.go hands the receiver, not the failed parse, to MaybeNoSuchOverloadErr.
    assert runtime_error('cidr("10.0.0.0/8").containsIP("x")') == "no such overload"
    assert runtime_error('cidr("10.0.0.0/8").containsIP("fe80::1%eth0")') == "no such overload"


@pytest.mark.parametrize(("expression", "message", "column"), [
    ('ip("1.2.3.4") < ip("1.2.3.5")',
     "found no matching overload for '_<_' applied to '(net.IP, net.IP)'", 15),
    ('ip("1.2.3.4") == "1.2.3.4"',
     "found no matching overload for '_==_' applied to '(net.IP, string)'", 15),
    ('ip("1.2.3.4").foo()', "undeclared reference to 'foo' (in container '')", 18),
    ("net.IP{} == net.IP{}", "'net.IP' is not a message type", 7),
    ("net.CIDR{}.prefixLength() == 0", "'net.CIDR' is not a message type", 9),
])
def test_compile_errors_are_upstreams(expression: str, message: str, column: int) -> None:
    error = compile_error(expression)
    assert (error.message, error.line, error.column) == (message, 1, column)


@pytest.mark.parametrize("expression", [
    'string(1) == "1" && string(1u) == "1" && string(1.5) == "1.5" && string(true) == "true"',
    'string(b"a") == "a" && string("a") == "a" && string(duration("1s")) == "1s"',
    'string(timestamp("2024-01-01T00:00:00Z")) == "2024-01-01T00:00:00Z"',
    f'string(device.attributes["{NET}"].port) == "1"',
])
def test_string_keeps_its_standard_overloads(expression: str) -> None:
    # string(net.IP) and string(net.CIDR) declare the standard function again, whole.
    assert compile_device_selector(expression).matches(NET, NET_DEVICE)


@pytest.mark.parametrize(("expression", "type_name"), [
    ('string([1]) == "x"', "list(int)"),
    ('string(quantity("1")) == "1"', "kubernetes.Quantity"),
])
def test_string_of_other_types_is_still_a_compile_error(expression: str, type_name: str) -> None:
    assert compile_error(expression).message == (
        f"found no matching overload for 'string' applied to '({type_name})'")
