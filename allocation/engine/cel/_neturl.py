"""Go's ``net/url`` parsing, rewritten over bytes as Go works on them, for the URL and
format CEL libraries (``_url``, ``_format``).

Python's ``urllib`` differs from Go (it accepts ``%zz``, splits queries at ``;``, keeps
``[1.2.3.4]`` hosts), and upstream's messages embed Go's, so this follows Go's url.go
function by function: ``parse`` (``ParseRequestURI`` with ``via_request``), ``parse_url``
(``Parse``), ``GoURL.string`` (``String``), ``GoURL.escaped_path`` (``EscapedPath``),
``split_host_port`` (``Hostname``/``Port``) and ``parse_query`` (``Query``). The Go
release matters: Kubernetes 1.36 is built with Go 1.26 and ``godebug default=go1.26``, so
a host outside brackets may hold one colon (``urlstrictcolons``; 1.34 and 1.35, with Go
1.24 and 1.25, split the port at the last colon instead), a query of more than 10,000
parameters reads as empty (``urlmaxqueryparams``, Go 1.24.12 and 1.25.6 on), and a
bracketed host must be an IPv6 address (Go 1.24.8 and 1.25.2 on).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from allocation.engine.cel._go import quote
from allocation.engine.cel._net import parse_addr

__all__ = ["URLError", "GoURL", "parse", "parse_url", "split_host_port", "parse_query"]

# Go's encoding modes (net/url's shouldEscape).
_PATH, _SEGMENT, _HOST, _ZONE, _USER, _QUERY, _FRAGMENT = range(7)
_ALNUM = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_HOST_EXTRA = frozenset(b"!$&'()*+,;=:[]<>\"")
_RESERVED = frozenset(b"$&+,/:;=?@")
_VALID_ENCODED = frozenset(b"!$&'()*+,;=:@[]%")
_USERINFO = frozenset(b"-._:~!$&'()*+,;=%@")
#: The schemes whose host, outside brackets, may hold only one colon: every scheme in Go
#: 1.26 (None), as Kubernetes 1.36 is built; Go 1.27 keeps the rule for http and https only.
_STRICT_COLONS: frozenset[bytes] | None = None
_MAX_QUERY_PARAMETERS = 10_000  # Go's urlmaxqueryparams default since go1.24 settings


class URLError(ValueError):
    """A Go net/url error; its text is the error's ``Error()``."""


def _should_escape(c: int, mode: int) -> bool:
    """net/url's shouldEscape (Go 1.26's table is generated from the same function)."""
    if c in _ALNUM:
        return False
    if mode in (_HOST, _ZONE) and c in _HOST_EXTRA:
        return False
    if c in b"-_.~":
        return False
    if c in _RESERVED:
        if mode == _PATH:
            return c == ord("?")
        if mode == _SEGMENT:
            return c in b"/;,?"
        if mode == _USER:
            return c in b"@/?:"
        if mode == _QUERY:
            return True
        if mode == _FRAGMENT:
            return False
    return not (mode == _FRAGMENT and c in b"!()*")


# Per mode, the bytes that need no escape (Go 1.26 keeps the same as a table): with
# bytes.translate, checking a whole component is one call in C (speed; docs/cel.md "URL").
_SAFE = [bytes(c for c in range(256) if not _should_escape(c, mode)) for mode in range(7)]
_ENCODED_OK = [bytes(sorted(set(_SAFE[mode]) | _VALID_ENCODED)) for mode in range(7)]
_HOST_OK = [bytes(c for c in range(256) if c >= 0x80 or not _should_escape(c, mode))
            for mode in range(7)]  # what unescape lets a host (or zone) hold unescaped
_CONTROL = bytes([*range(0x20), 0x7F])
_USERINFO_OK = bytes(sorted(_ALNUM | _USERINFO))


def _unhex(c: int) -> int:
    return int(chr(c), 16)


def _unescape(s: bytes, mode: int) -> bytes:
    """net/url's unescape: %XX decoded (``+`` is a space in a query); URLError for a bad
    escape, or in a host for an ASCII byte a host may not hold."""
    if b"%" not in s and (mode != _QUERY or b"+" not in s) and (
            mode not in (_HOST, _ZONE) or not s.translate(None, _HOST_OK[mode])):
        return s  # nothing to decode, nothing to refuse
    i = 0
    while i < len(s):
        c = s[i]
        if c == 0x25:  # %
            if i + 2 >= len(s) or s[i + 1] not in _HEX or s[i + 2] not in _HEX:
                raise URLError(f"invalid URL escape {quote(s[i : i + 3])}")
            # In a host %-escapes are for non-ASCII bytes only, and %25 (RFC 6874 zones).
            if mode == _HOST and _unhex(s[i + 1]) < 8 and s[i : i + 3] != b"%25":
                raise URLError(f"invalid URL escape {quote(s[i : i + 3])}")
            if mode == _ZONE:
                value = _unhex(s[i + 1]) << 4 | _unhex(s[i + 2])
                if s[i : i + 3] != b"%25" and value != 0x20 and _should_escape(value, _HOST):
                    raise URLError(f"invalid URL escape {quote(s[i : i + 3])}")
            i += 3
        else:
            if mode in (_HOST, _ZONE) and c < 0x80 and _should_escape(c, mode):
                raise URLError(f"invalid character {quote(s[i : i + 1])} in host name")
            i += 1
    if b"%" not in s and (mode != _QUERY or b"+" not in s):
        return s
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == 0x25:
            out.append(_unhex(s[i + 1]) << 4 | _unhex(s[i + 2]))
            i += 3
            continue
        out.append(0x20 if c == 0x2B and mode == _QUERY else c)
        i += 1
    return bytes(out)


def _escape(s: bytes, mode: int) -> bytes:
    """net/url's escape: bytes to escape as %XX (upper-case hex), a query's space as +."""
    if not s.translate(None, _SAFE[mode]):
        return s
    out = bytearray()
    for c in s:
        if c == 0x20 and mode == _QUERY:
            out.append(0x2B)
        elif _should_escape(c, mode):
            out += b"%%%02X" % c
        else:
            out.append(c)
    return bytes(out)


def _valid_encoded(s: bytes, mode: int) -> bool:
    return not s.translate(None, _ENCODED_OK[mode])


def _valid_port(port: bytes) -> bool:
    """``""`` or ``:`` followed by decimal digits (no range check, as Go)."""
    return not port or (port[:1] == b":" and (len(port) == 1 or port[1:].isdigit()))


@dataclass(frozen=True, slots=True)
class GoURL:
    """The fields of Go's ``url.URL`` the library reads or ``String()`` writes."""

    scheme: bytes = b""
    opaque: bytes = b""
    user: tuple[bytes, bytes | None] | None = None  # (username, password or None)
    host: bytes = b""
    path: bytes = b""
    raw_path: bytes = b""
    omit_host: bool = False
    force_query: bool = False
    raw_query: bytes = b""
    fragment: bytes = b""
    raw_fragment: bytes = b""

    def escaped_path(self) -> bytes:
        """``URL.EscapedPath``.

        Returns:
            The raw path when it is a valid escaping of the path, else the path escaped.
        """
        if self.raw_path and _valid_encoded(self.raw_path, _PATH) \
                and _unescape_or_none(self.raw_path, _PATH) == self.path:
            return self.raw_path
        return b"*" if self.path == b"*" else _escape(self.path, _PATH)

    def escaped_fragment(self) -> bytes:
        if self.raw_fragment and _valid_encoded(self.raw_fragment, _FRAGMENT) \
                and _unescape_or_none(self.raw_fragment, _FRAGMENT) == self.fragment:
            return self.raw_fragment
        return _escape(self.fragment, _FRAGMENT)

    def string(self) -> bytes:
        """``URL.String()``.

        Returns:
            The URL's text, from which ``parse_url`` gives back the same fields.
        """
        out = bytearray(self.scheme + b":" if self.scheme else b"")
        if self.opaque:
            out += self.opaque
        else:
            if (self.scheme or self.host or self.user) \
                    and not (self.omit_host and not self.host and not self.user):
                if self.host or self.path or self.user:
                    out += b"//"
                if self.user:
                    name, password = self.user
                    out += _escape(name, _USER)
                    if password is not None:
                        out += b":" + _escape(password, _USER)
                    out += b"@"
                out += _escape(self.host, _HOST)
            path = self.escaped_path()
            if path and path[:1] != b"/" and self.host:
                out += b"/"
            if not out and b":" in path.partition(b"/")[0]:
                out += b"./"
            out += path
        if self.force_query or self.raw_query:
            out += b"?" + self.raw_query
        if self.fragment:
            out += b"#" + self.escaped_fragment()
        return bytes(out)

    def string_drops_authority(self) -> bool:
        """Whether ``string()`` writes a path starting with ``//`` and no authority before
        it (no scheme, host and user, or OmitHost), so ``parse_url`` reads the path's first
        segment as a host this URL does not have (``url("/%2Fx")``: path ``//x``)."""
        if self.opaque or self.host or self.user or (self.scheme and not self.omit_host):
            return False
        return self.escaped_path().startswith(b"//")


def _unescape_or_none(s: bytes, mode: int) -> bytes | None:
    try:
        return _unescape(s, mode)
    except URLError:
        return None


def _scheme(raw: bytes) -> tuple[bytes, bytes]:
    """net/url's getScheme: (scheme, rest); a leading ``:`` is an error."""
    for i, c in enumerate(raw):
        if 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A:
            continue
        if 0x30 <= c <= 0x39 or c in b"+-.":
            if i == 0:
                return b"", raw
            continue
        if c == 0x3A:
            if i == 0:
                raise URLError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return b"", raw
    return b"", raw


def _parse_host(scheme: bytes, host: bytes) -> bytes:
    """net/url's parseHost (Go 1.26): host[:port], unescaped."""
    opening = host.rfind(b"[")
    if opening > 0:
        raise URLError("invalid IP-literal")
    if opening == 0:
        closing = host.rfind(b"]")
        if closing < 0:
            raise URLError("missing ']' in host")
        colon_port = host[closing + 1 :]
        if not _valid_port(colon_port):
            raise URLError(f"invalid port {quote(colon_port)} after host")
        name = host[1:closing]
        zone = name.find(b"%25")
        if zone >= 0:
            name = _unescape(name[:zone], _HOST) + _unescape(name[zone:], _ZONE)
        else:
            name = _unescape(name, _HOST)
        # Only an IPv6 address may stand in brackets (RFC 3986): not IPv4, not a name.
        try:
            (family, _address), _zone = parse_addr(name.decode("utf-8", "surrogateescape"))
        except ValueError as error:
            raise URLError(f"invalid host: {error}") from None
        if family == 4:
            raise URLError("invalid IP-literal")
        return b"[" + name + b"]" + colon_port
    colon = host.find(b":")
    if colon >= 0:
        if _STRICT_COLONS is not None and scheme not in _STRICT_COLONS:
            colon = host.rfind(b":")
        if not _valid_port(host[colon:]):
            raise URLError(f"invalid port {quote(host[colon:])} after host")
    return _unescape(host, _HOST)


def _valid_userinfo(userinfo: bytes) -> bool:
    """net/url's validUserinfo, over runes: any non-ASCII rune is invalid."""
    return not userinfo.translate(None, _USERINFO_OK)


def _parse_authority(scheme: bytes,
                     authority: bytes) -> tuple[tuple[bytes, bytes | None] | None, bytes]:
    at = authority.rfind(b"@")
    host = _parse_host(scheme, authority[at + 1 :])
    if at < 0:
        return None, host
    userinfo = authority[:at]
    if not _valid_userinfo(userinfo):
        raise URLError("net/url: invalid userinfo")
    name, colon, password = userinfo.partition(b":")
    return (_unescape(name, _USER), _unescape(password, _USER) if colon else None), host


def parse(raw: bytes, via_request: bool, authority: bool = True) -> GoURL:
    """net/url's parse: ``ParseRequestURI`` with ``via_request``, else ``Parse`` of the
    text before a fragment; without ``authority``, a ``//`` after the scheme starts the
    path (the text of a URL whose ``string_drops_authority``).

    Returns:
        The URL's fields.

    Raises:
        URLError: Go's error, without the ``parse "..."`` that ``url.Error`` adds.
    """
    if len(raw.translate(None, _CONTROL)) != len(raw):
        raise URLError("net/url: invalid control character in URL")
    if not raw and via_request:
        raise URLError("empty url")
    if raw == b"*":
        return GoURL(path=b"*")
    scheme, rest = _scheme(raw)
    scheme = scheme.lower()
    force_query, raw_query = False, b""
    if rest.endswith(b"?") and rest.count(b"?") == 1:
        force_query, rest = True, rest[:-1]
    else:
        rest, _mark, raw_query = rest.partition(b"?")
    if not rest.startswith(b"/"):
        if scheme:  # a rootless path is opaque (RFC 3986)
            return GoURL(scheme=scheme, opaque=rest, force_query=force_query,
                        raw_query=raw_query)
        if via_request:
            raise URLError("invalid URI for request")
        if b":" in rest.partition(b"/")[0]:
            raise URLError("first path segment in URL cannot contain colon")
    user, host, omit_host = None, b"", False
    if authority and (scheme or (not via_request and not rest.startswith(b"///"))) \
            and rest.startswith(b"//"):
        written, slash, path = rest[2:].partition(b"/")
        rest = slash + path
        user, host = _parse_authority(scheme, written)
    elif scheme and rest.startswith(b"/"):
        omit_host = True
    path = _unescape(rest, _PATH)
    return GoURL(scheme=scheme, user=user, host=host, path=path,
                raw_path=b"" if _escape(path, _PATH) == rest else rest,
                omit_host=omit_host, force_query=force_query, raw_query=raw_query)


def parse_url(raw: bytes, authority: bool = True) -> GoURL:
    """``url.Parse``: the fragment cut off first (``authority`` as for :func:`parse`).

    Returns:
        The URL's fields, the fragment's included.

    Raises:
        URLError: Go's ``url.Error`` text (``parse "x": ...``), which names the text before
            the fragment, or the whole text when the fragment is the problem.
    """
    head, _hash, fragment = raw.partition(b"#")
    try:
        url = parse(head, False, authority)
    except URLError as error:
        raise URLError(f"parse {quote(head)}: {error}") from None
    if not fragment:
        return url
    try:
        decoded = _unescape(fragment, _FRAGMENT)
    except URLError as error:
        raise URLError(f"parse {quote(raw)}: {error}") from None
    raw_fragment = b"" if _escape(decoded, _FRAGMENT) == fragment else fragment
    return replace(url, fragment=decoded, raw_fragment=raw_fragment)


def split_host_port(host: bytes) -> tuple[bytes, bytes]:
    """net/url's splitHostPort (``Hostname``, ``Port``).

    Returns:
        (host, port): the port is what follows the last colon when that is digits (else
        empty), and a bracketed name loses its brackets.
    """
    colon = host.rfind(b":")
    port = b""
    if colon >= 0 and _valid_port(host[colon:]):
        host, port = host[:colon], host[colon + 1 :]
    if host.startswith(b"[") and host.endswith(b"]"):
        host = host[1:-1]
    return host, port


def parse_query(raw: bytes) -> list[tuple[bytes, bytes]]:
    """``URL.Query()``'s pairs in order: ``url.ParseQuery`` keeping what parses:
    ``&``-separated, a setting with ``;`` dropped (Go 1.17 on), ``+`` a space, and nothing
    at all past 10,000 parameters (``urlmaxqueryparams``).

    Returns:
        (key, value) pairs, unescaped, in the query's order.
    """
    if raw.count(b"&") + 1 > _MAX_QUERY_PARAMETERS:
        return []
    pairs = []
    for setting in raw.split(b"&"):
        if not setting or b";" in setting:
            continue
        key, _equals, value = setting.partition(b"=")
        key, value = _unescape_or_none(key, _QUERY), _unescape_or_none(value, _QUERY)
        if key is not None and value is not None:
            pairs.append((key, value))
    return pairs
