"""Kubernetes' CEL URL library, independent of the CEL library underneath.

resource.k8s.io/v1 selectors compile in Kubernetes' base environment, which has had
``k8s.io/apiserver/pkg/cel/library`` urls.go since 1.0: ``url(s)`` checks ``s`` with Go's
``net/url.ParseRequestURI`` (an absolute URI or an absolute path) and keeps the result of
``url.Parse``; ``kubernetes.URL`` (``pkg/cel/url.go``) is an opaque type whose equality is
that of ``URL.String()``. Here a value is that text, Go's ``String()`` (:class:`URLText`),
which the accessors parse again: ``Parse(String())`` gives back the same scheme, host,
escaped path and query, except where ``String()`` writes a path starting with ``//`` and
no authority (``url("/%2Fx")``), which the text keeps as a flag read with the path (the
message's equality-neutral form, ``_opaque``). Go's parsing is ``_neturl``; the messages are
upstream's, which embed Go's (``parse "x": invalid URI for request``). docs/cel.md ("URL")
lists what was compared with upstream.

:data:`FUNCTIONS` lists the overloads in ``_k8s.Overload``'s terms (kind :data:`URL`;
``getQuery`` gives the kind :data:`QUERY`); implementations take and return texts and
raise ValueError with upstream's message for a run-time error.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from allocation.engine.cel._go import quote
from allocation.engine.cel._k8s import Overload
from allocation.engine.cel._neturl import (
    GoURL,
    URLError,
    parse,
    parse_query,
    parse_url,
    split_host_port,
)

__all__ = ["URL", "QUERY", "FUNCTIONS", "URLText", "url_text", "request_uri_error"]

URL = "url"
#: The kind of ``getQuery()``'s result: a map of string to list of string.
QUERY = "map:list:string"


class URLText(str):
    """A URL value: Go's ``String()`` of the URL (equal texts, equal values, as upstream's
    ``Equal``) and ``drops_authority``, whether that text reads back with a host the URL
    does not have (``GoURL.string_drops_authority``), so the accessors read it without."""

    drops_authority: bool

    def __new__(cls, text: str, drops_authority: bool = False) -> URLText:
        made = super().__new__(cls, text)
        made.drops_authority = drops_authority
        return made


@lru_cache(maxsize=4096)
def request_uri_error(text: str) -> str | None:
    """The error of Go's ``url.ParseRequestURI(text)`` (``parse "x": invalid URI for
    request``), None when it parses (``isURL``; the format library's ``uri``)."""
    raw = text.encode("utf-8")
    try:
        parse(raw, True)
    except URLError as error:
        return f"parse {quote(raw)}: {error}"
    return None


@lru_cache(maxsize=4096)
def url_text(text: str) -> URLText:
    """``url(s)``: the canonical text of ``s`` (Go's ``String()`` of ``url.Parse(s)``).

    Raises:
        ValueError: ``s`` is no absolute URI or absolute path, with upstream's message.
    """
    head = "URL parse error during conversion from string: "
    problem = request_uri_error(text)
    if problem is not None:
        raise ValueError(head + problem)
    try:
        url = parse_url(text.encode("utf-8"))
    except URLError as error:
        raise ValueError(f"{head}{error}") from None
    return URLText(_decode(url.string()), url.string_drops_authority())


def _decode(value: bytes) -> str:
    """A Go string as CEL gives it here: bytes that are not UTF-8 (``%FF`` unescaped)
    become U+FFFD (upstream keeps the raw bytes; docs/cel.md "URL")."""
    return value.decode("utf-8", "replace")


def _url(text: URLText) -> GoURL:
    """The URL of a value (``url_text``'s result parses again to the same parts)."""
    return _parsed(str(text), text.drops_authority)


@lru_cache(maxsize=4096)
def _parsed(text: str, drops_authority: bool) -> GoURL:
    return parse_url(text.encode("utf-8"), not drops_authority)


def _query(text: URLText) -> dict[str, list[str]]:
    """``getQuery()``: the query's values by key, repeated keys in order."""
    values: dict[str, list[str]] = {}
    for key, value in parse_query(_url(text).raw_query):
        values.setdefault(_decode(key), []).append(_decode(value))
    return values


def _read(part: Callable[[GoURL], bytes]) -> Callable[[URLText], str]:
    """An accessor of a URL value."""
    return lambda text: _decode(part(_url(text)))


#: Every overload of the library (``kubernetes.urls``).
FUNCTIONS: tuple[Overload, ...] = (
    Overload("url", "string_to_url", ("string",), URL, False, url_text),
    Overload("getScheme", "url_get_scheme", (URL,), "string", True,
             _read(lambda url: url.scheme)),
    Overload("getHost", "url_get_host", (URL,), "string", True, _read(lambda url: url.host)),
    Overload("getHostname", "url_get_hostname", (URL,), "string", True,
             _read(lambda url: split_host_port(url.host)[0])),
    Overload("getPort", "url_get_port", (URL,), "string", True,
             _read(lambda url: split_host_port(url.host)[1])),
    Overload("getEscapedPath", "url_get_escaped_path", (URL,), "string", True,
             _read(GoURL.escaped_path)),
    Overload("getQuery", "url_get_query", (URL,), QUERY, True, _query),
    Overload("isURL", "is_url_string", ("string",), "bool", False,
             lambda text: request_uri_error(text) is None),
)
