"""Kubernetes' CEL IP and CIDR libraries, independent of the CEL library underneath.

resource.k8s.io/v1 selectors compile in Kubernetes' base environment, which has had
``k8s.io/apiserver/pkg/cel/library`` ip.go and cidr.go since 1.30: ``net.IP`` and
``net.CIDR`` are opaque types (``pkg/cel/ip.go``, ``cidr.go``) over Go's ``netip.Addr`` and
``netip.Prefix``, with member functions and no operators but equality. Here a value of
either type is its canonical text, Go's ``Addr.String()`` and ``Prefix.String()``
(``"10.0.0.1/8"``: the address is not masked). Upstream refuses zones and IPv4-mapped IPv6
addresses, so equal texts are exactly equal values (``Addr ==``, ``Prefix ==``).

Parsing follows Go's ``netip.ParseAddr`` and ``ParsePrefix`` rather than Python's
``ipaddress``: upstream's error messages embed Go's (``ParseAddr("x"): unable to parse
IP``), and the two disagree on inputs (``ipaddress.ip_interface`` accepts
``1.2.3.4/255.0.0.0`` and ``1.2.3.4/08``, Go does not). docs/cel.md ("IP and CIDR") lists
what was compared with upstream.

:data:`FUNCTIONS` lists the overloads in ``_k8s.Overload``'s terms (kinds :data:`IP`,
:data:`CIDR`); implementations take and return texts and raise ValueError for a run-time
error, with upstream's message.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from allocation.engine.cel._go import quote
from allocation.engine.cel._k8s import Overload, accepts

__all__ = ["IP", "CIDR", "FUNCTIONS", "ip_text", "cidr_text", "parse_addr"]

IP = "ip"
CIDR = "cidr"
_MAPPED = 0xFFFF << 32  # ::ffff:0:0/96, IPv4-mapped IPv6 (netip Addr.Is4In6)
_BITS = {4: 32, 6: 128}

_Addr = tuple[int, int]  # (family 4 or 6, the address as an integer)


def _addr_error(whole: str, message: str, at: str = "") -> ValueError:
    """netip's parseAddrError text."""
    where = f" (at {quote(at)})" if at else ""
    return ValueError(f"ParseAddr({quote(whole)}): {message}{where}")


def _ipv4(whole: str, text: str) -> int:
    """netip's IPv4 field parse of ``text`` (part of ``whole``, named in errors): four
    decimal octets, no leading zeros."""
    octets: list[int] = []
    value = digits = 0
    for index, char in enumerate(text):
        if "0" <= char <= "9":
            if digits == 1 and value == 0:
                raise _addr_error(whole, "IPv4 field has octet with leading zero")
            value, digits = value * 10 + ord(char) - 48, digits + 1
            if value > 255:
                raise _addr_error(whole, "IPv4 field has value >255")
        elif char == ".":
            if index == 0 or index == len(text) - 1 or text[index - 1] == ".":
                raise _addr_error(whole, "IPv4 field must have at least one digit",
                                  text[index:])
            if len(octets) == 3:
                raise _addr_error(whole, "IPv4 address too long")
            octets.append(value)
            value = digits = 0
        else:
            raise _addr_error(whole, "unexpected character", text[index:])
    if len(octets) < 3:
        raise _addr_error(whole, "IPv4 address too short")
    return int.from_bytes(bytes([*octets, value]), "big")


def _hex_group(whole: str, text: str) -> tuple[int, int]:
    """(value, length) of the hex digits that start ``text``, at most four."""
    value = length = 0
    for char in text:
        digit = "0123456789abcdef".find(char.lower()) if char.isascii() else -1
        if digit < 0:
            break
        value = value * 16 + digit
        if length > 3:
            raise _addr_error(whole, "each group must have 4 or less digits", text)
        length += 1
    if length == 0:
        raise _addr_error(whole, "each colon-separated field must have at least one digit",
                          text)
    return value, length


def _ipv6(whole: str) -> tuple[int, str]:
    """(address, zone) of ``whole`` as netip parses IPv6, in the same order of checks so
    that an invalid text gets the same message."""
    text, percent, zone = whole.partition("%")
    if percent and not zone:
        raise _addr_error(whole, "zone must be a non-empty string")
    groups: list[int] = []  # 16-bit groups, an embedded IPv4 address as two
    ellipsis = -1  # the group index where "::" stands
    if text.startswith("::"):
        ellipsis, text = 0, text[2:]
        if not text:
            return 0, zone
    while len(groups) < 8:
        value, length = _hex_group(whole, text)
        if text[length : length + 1] == ".":
            if ellipsis < 0 and len(groups) != 6:
                raise _addr_error(whole, "embedded IPv4 address must replace the final 2 "
                                  "fields of the address", text)
            if len(groups) > 6:
                raise _addr_error(whole, "too many hex fields to fit an embedded IPv4 at "
                                  "the end of the address", text)
            v4 = _ipv4(whole, text)
            groups += [v4 >> 16, v4 & 0xFFFF]
            text = ""
            break
        groups.append(value)
        text = text[length:]
        if not text:
            break
        if text[0] != ":":
            raise _addr_error(whole, "unexpected character, want colon", text)
        if len(text) == 1:
            raise _addr_error(whole, "colon must be followed by more characters", text)
        text = text[1:]
        if text[0] == ":":
            if ellipsis >= 0:
                raise _addr_error(whole, "multiple :: in address", text)
            ellipsis, text = len(groups), text[1:]
            if not text:
                break
    if text:
        raise _addr_error(whole, "trailing garbage after address", text)
    if len(groups) < 8:
        if ellipsis < 0:
            raise _addr_error(whole, "address string too short")
        groups[ellipsis:ellipsis] = [0] * (8 - len(groups))
    elif ellipsis >= 0:
        raise _addr_error(whole, "the :: must expand to at least one field of zeros")
    return sum(group << (16 * (7 - index)) for index, group in enumerate(groups)), zone


def parse_addr(text: str) -> tuple[_Addr, str]:
    """Go's ``netip.ParseAddr`` (also net/url's check of a bracketed host, ``_url``).

    Returns:
        ((family 4 or 6, the address as an integer), the zone or "").

    Raises:
        ValueError: not an address, with netip's message (``ParseAddr("x"): ...``).
    """
    for char in text:
        if char == ".":
            return (4, _ipv4(text, text)), ""
        if char == ":":
            address, zone = _ipv6(text)
            return (6, address), zone
        if char == "%":
            raise _addr_error(text, "missing IPv6 address")
    raise _addr_error(text, "unable to parse IP")


def _mapped(addr: _Addr) -> bool:
    return addr[0] == 6 and addr[1] >> 32 == 0xFFFF


@lru_cache(maxsize=4096)
def _ip(text: str) -> _Addr:
    """Upstream's ``parseIPAddr``: no zone, no IPv4-mapped IPv6 address."""
    try:
        addr, zone = parse_addr(text)
    except ValueError as error:
        raise ValueError(f"IP Address {quote(text)} parse error during conversion from "
                         f"string: {error}") from None
    if zone:
        raise ValueError(f"IP address {quote(text)} with zone value is not allowed")
    if _mapped(addr):
        raise ValueError(f"IPv4-mapped IPv6 address {quote(text)} is not allowed")
    return addr


def _text(addr: _Addr) -> str:
    """Go's ``Addr.String()``: dotted IPv4; IPv6 in lower-case hex with the first longest
    run of two or more zero groups as ``::`` (RFC 5952)."""
    family, value = addr
    if family == 4:
        return ".".join(str(octet) for octet in value.to_bytes(4, "big"))
    if value >> 32 == 0xFFFF:
        return "::ffff:" + _text((4, value & 0xFFFFFFFF))
    groups = [(value >> (16 * (7 - index))) & 0xFFFF for index in range(8)]
    start = end = 0  # the first longest run of two or more zero groups
    for index in range(8):
        run = index
        while run < 8 and groups[run] == 0:
            run += 1
        if run - index >= 2 and run - index > end - start:
            start, end = index, run
    hexes = [f"{group:x}" for group in groups]
    if end > start:
        return ":".join(hexes[:start]) + "::" + ":".join(hexes[end:])
    return ":".join(hexes)


def ip_text(text: str) -> str:
    """``ip(s)``: the canonical text of ``s``; ValueError (upstream's message) when it is
    not an IP address upstream accepts."""
    return _text(_ip(text))


_Prefix = tuple[int, int, int]  # (family, address, bits)


def _parse_prefix(text: str) -> _Prefix:
    """Go's ``netip.ParsePrefix``; ValueError with its message."""
    def error(message: str) -> ValueError:
        return ValueError(f"netip.ParsePrefix({quote(text)}): {message}")

    slash = text.rfind("/")
    if slash < 0:
        raise error("no '/'")
    try:
        (family, address), zone = parse_addr(text[:slash])
    except ValueError as parse_error:
        raise error(str(parse_error)) from None
    if zone:
        raise error("IPv6 zones cannot be present in a prefix")
    bits = text[slash + 1 :]
    # strconv.Atoi after netip's own check: decimal digits, no sign, no leading zero, int64
    if not bits or not all("0" <= c <= "9" for c in bits) \
            or (len(bits) > 1 and bits[0] == "0") or int(bits) > 2**63 - 1:
        raise error(f"bad bits after slash: {quote(bits)}")
    if int(bits) > _BITS[family]:
        raise error("prefix length out of range")
    return family, address, int(bits)


@lru_cache(maxsize=4096)
def _cidr(text: str) -> _Prefix:
    """Upstream's ``parseCIDR``, with ``stringToCIDR``'s message (which repeats the
    prefix of parseCIDR's own, as upstream)."""
    head = "network address parse error during conversion from string: "
    try:
        prefix = _parse_prefix(text)
    except ValueError as error:
        raise ValueError(f"{head}{head}{error}") from None
    if _mapped(prefix[:2]):
        raise ValueError(f"{head}IPv4-mapped IPv6 address {quote(text)} is not allowed")
    return prefix


def cidr_text(text: str) -> str:
    """``cidr(s)``: the canonical text of ``s`` (the address as given, not masked);
    ValueError (upstream's message) when it is not a prefix upstream accepts."""
    return _prefix_text(_cidr(text))


def _prefix_text(prefix: _Prefix) -> str:
    """Go's ``Prefix.String()``."""
    return f"{_text(prefix[:2])}/{prefix[2]}"


def _masked(prefix: _Prefix) -> _Prefix:
    family, address, bits = prefix
    host = _BITS[family] - bits
    return family, address >> host << host, bits


def _contains_ip(cidr: str, ip: str) -> bool:
    """``Prefix.Contains``: same family and the same first ``bits`` bits."""
    family, address, bits = _masked(_cidr(cidr))
    other = _ip(ip)
    return other[0] == family and _masked((family, other[1], bits))[1] == address


def _contains_ip_string(cidr: str, text: str) -> bool:
    """``containsIP(string)``: an unparsable string is "no such overload", not the parse
    error, since upstream hands the receiver, not the failed parse, to
    ``MaybeNoSuchOverloadErr`` (cidr.go ``cidrContainsIP``; ``containsCIDR`` hands on the
    parse error)."""
    try:
        _ip(text)
    except ValueError:
        raise ValueError("no such overload") from None
    return _contains_ip(cidr, text)


def _contains_cidr(cidr: str, other: str) -> bool:
    """Upstream's ``Overlaps(other) && bits <= other's bits``: ``other`` lies within."""
    family, address, bits = _cidr(cidr)
    inner = _cidr(other)
    return inner[0] == family and bits <= inner[2] \
        and _masked((family, inner[1], bits)) == _masked((family, address, bits))


def _predicate(test: Callable[[int, int], bool]) -> Callable[[str], bool]:
    """A member test on an IP, given the (family, address) of its canonical text."""
    def apply(text: str) -> bool:
        return test(*_ip(text))
    return apply


def _loopback(family: int, value: int) -> bool:
    return value >> 24 == 127 if family == 4 else value == 1


def _multicast(family: int, value: int) -> bool:
    return value >> 28 == 0xE if family == 4 else value >> 120 == 0xFF


def _link_local_unicast(family: int, value: int) -> bool:
    return value >> 16 == 0xA9FE if family == 4 else value >> 118 == 0xFE80 >> 6


def _link_local_multicast(family: int, value: int) -> bool:
    return value >> 8 == 0xE00000 if family == 4 else (value >> 112) & 0xFF0F == 0xFF02


def _global_unicast(family: int, value: int) -> bool:
    """netip's IsGlobalUnicast: none of unspecified, limited broadcast, loopback,
    multicast, link-local unicast."""
    if value == 0 or (family == 4 and value == 0xFFFFFFFF):
        return False
    return not (_loopback(family, value) or _multicast(family, value)
                or _link_local_unicast(family, value))


def _ip_overloads() -> list[Overload]:
    def canonical(text: str) -> bool:
        return ip_text(text) == text

    return [
        Overload("ip", "string_to_ip", ("string",), IP, False, ip_text),
        Overload("family", "ip_family", (IP,), "int", True, lambda text: _ip(text)[0]),
        Overload("ip.isCanonical", "ip_is_canonical", ("string",), "bool", False, canonical),
        Overload("isUnspecified", "ip_is_unspecified", (IP,), "bool", True,
                 _predicate(lambda family, value: value == 0)),
        Overload("isLoopback", "ip_is_loopback", (IP,), "bool", True, _predicate(_loopback)),
        Overload("isLinkLocalMulticast", "ip_is_link_local_multicast", (IP,), "bool", True,
                 _predicate(_link_local_multicast)),
        Overload("isLinkLocalUnicast", "ip_is_link_local_unicast", (IP,), "bool", True,
                 _predicate(_link_local_unicast)),
        Overload("isGlobalUnicast", "ip_is_global_unicast", (IP,), "bool", True,
                 _predicate(_global_unicast)),
        Overload("isIP", "is_ip", ("string",), "bool", False, accepts(_ip)),
        Overload("string", "ip_to_string", (IP,), "string", False, str),
    ]


def _cidr_overloads() -> list[Overload]:
    return [
        Overload("cidr", "string_to_cidr", ("string",), CIDR, False, cidr_text),
        Overload("containsIP", "cidr_contains_ip_string", (CIDR, "string"), "bool", True,
                 _contains_ip_string),
        Overload("containsIP", "cidr_contains_ip_ip", (CIDR, IP), "bool", True, _contains_ip),
        Overload("containsCIDR", "cidr_contains_cidr_string", (CIDR, "string"), "bool", True,
                 _contains_cidr),
        Overload("containsCIDR", "cidr_contains_cidr", (CIDR, CIDR), "bool", True,
                 _contains_cidr),
        Overload("ip", "cidr_ip", (CIDR,), IP, True,
                 lambda text: _text(_cidr(text)[:2])),
        Overload("prefixLength", "cidr_prefix_length", (CIDR,), "int", True,
                 lambda text: _cidr(text)[2]),
        Overload("masked", "cidr_masked", (CIDR,), CIDR, True,
                 lambda text: _prefix_text(_masked(_cidr(text)))),
        Overload("isCIDR", "is_cidr", ("string",), "bool", False, accepts(_cidr)),
        Overload("string", "cidr_to_string", (CIDR,), "string", False, str),
    ]


#: Every overload of both libraries.
FUNCTIONS: tuple[Overload, ...] = (*_ip_overloads(), *_cidr_overloads())
