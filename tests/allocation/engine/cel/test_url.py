"""Kubernetes' URL library in resource.k8s.io/v1 device selectors
(allocation/engine/cel/_url.py over _neturl.py, declared by _library.py).

The first cases are upstream's own: urls.go's documented examples and the "URL parsing"
cases of k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel/validation_test.go. The
rest are Go's net/url rules the library depends on, each expected value taken from Go's
url.go (Go 1.26, as Kubernetes 1.36 is built; docs/cel.md "URL").
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine.cel import compile_device_selector
from allocation.engine.cel._neturl import parse_url
from allocation.engine.cel._url import request_uri_error, url_text
from allocation.engine.v1 import Allocator, make_profile
from tests.allocation.engine.cel.device_helpers import compile_error, runtime_error, value
from tests.allocation.engine.v1.builders import (
    DRIVER,
    claim,
    device,
    device_class,
    node,
    request,
    slice_,
)

SELF = "https://user:pass@kubernetes.io:80/docs/home?k1=a&k2=b&k2=c#anchor"


@pytest.mark.parametrize("expression", [
    # validation_test.go "URL parsing"
    "url('/path').getScheme() == ''",
    "url('https://example.com/').getScheme() == 'https'",
    "url('https://example.com:80/').getHost() == 'example.com:80'",
    "url('https://example.com/').getHost() == 'example.com'",
    "url('https://[::1]:80/').getHost() == '[::1]:80'",
    "url('https://[::1]/').getHost() == '[::1]'",
    "url('/path').getHost() == ''",
    "url('https://example.com:80/').getHostname() == 'example.com'",
    "url('https://127.0.0.1/').getHostname() == '127.0.0.1'",
    "url('https://[::1]/').getHostname() == '::1'",
    "url('/path').getHostname() == ''",
    "url('https://example.com:80/').getPort() == '80'",
    "url('https://example.com/').getPort() == ''",
    "url('/path').getPort() == ''",
    "url('https://example.com/path').getEscapedPath() == '/path'",
    "url('https://example.com/with space/').getEscapedPath() == '/with%20space/'",
    "url('https://example.com').getEscapedPath() == ''",
    "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == "
    "{ 'k1': ['a'], 'k2': ['b', 'c']}",
    "url('https://example.com/path?key with spaces=value with spaces').getQuery() == "
    "{ 'key with spaces': ['value with spaces']}",
    "url('https://example.com/path?').getQuery() == {}",
    "url('https://example.com/path').getQuery() == {}",
    f"url('{SELF}').getScheme() == 'https'",
    f"url('{SELF}').getHost() == 'kubernetes.io:80'",
    f"url('{SELF}').getHostname() == 'kubernetes.io'",
    f"url('{SELF}').getPort() == '80'",
    f"url('{SELF}').getEscapedPath() == '/docs/home'",
    f"url('{SELF}').getQuery() == {{'k1': ['a'], 'k2': ['b', 'c']}}",
    "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
    "isURL('/path') == true",
    "isURL('https://a:b:c/') == false",
    "isURL('../relative-path') == false",
    # urls.go's documentation
    "url('https://example.com/path with spaces/').getEscapedPath() == "
    "'/path%20with%20spaces/'",
    "url('https://[::1]:80/').getHostname() == '::1'",
    # kubernetes.URL equality is that of Go's String()
    "url('https://example.com/') == url('https://example.com/')",
    "url('HTTPS://example.com/') == url('https://example.com/')",  # the scheme is lowered
    "url('https://example.com/a b') == url('https://example.com/a%20b')",
    "url('https://example.com/a%2fb') != url('https://example.com/a/b')",  # RawPath kept
    "url('https://example.com/') != url('https://example.com')",
    "url('https://example.com/#x') != url('https://example.com/')",  # the fragment counts
    "url('https://u@example.com/') != url('https://example.com/')",
    "type(url('/x')) == type(url('https://y'))",
    "[url('/a'), url('/b')].exists(u, u.getEscapedPath() == '/b')",
])
def test_upstream_cases(expression: str) -> None:
    assert value(expression) is True


@pytest.mark.parametrize(("text", "canonical"), [
    ("https://Example.com:80/a b?x=1#frag", "https://Example.com:80/a%20b?x=1#frag"),
    ("HTTP://x/", "http://x/"),
    ("http:/path", "http:/path"),  # OmitHost: an empty authority is not written back
    ("http:///path", "http:///path"),
    ("mailto:user@example.com", "mailto:user@example.com"),  # opaque
    ("*", "*"),
    ("/a%2fb/c", "/a%2fb/c"),  # a valid raw path is kept
    ("/a%41b", "/a%41b"),  # a raw path that escapes more than needed is kept too
    ("/a%20b c", "/a%20b%20c"),  # one that is not a valid escaping is not
    ("http://%C3%A9.com/", "http://%C3%A9.com/"),
    ("http://é.com/", "http://%C3%A9.com/"),  # non-ASCII in a host is escaped
    ("http://[fe80::1%25en0]:8080/", "http://[fe80::1%25en0]:8080/"),
    ("http://x/?", "http://x/?"),  # ForceQuery
    ("http://x/p?a?b", "http://x/p?a?b"),
    ("http://x/#a b", "http://x/#a%20b"),
    ("http://x/#a!(b)", "http://x/#a!(b)"),
])
def test_the_value_is_go_url_string(text: str, canonical: str) -> None:
    assert url_text(text) == canonical
    assert url_text(canonical) == canonical  # the accessors read the text again


@pytest.mark.parametrize(("text", "part", "expected"), [
    ("http://[fe80::1%25en0]:8080/", "getHost", "[fe80::1%en0]:8080"),
    ("http://[fe80::1%25en0]:8080/", "getHostname", "fe80::1%en0"),
    ("http://[fe80::1%25en0]/", "getPort", ""),
    ("http://x:99999/", "getPort", "99999"),  # no range check, as Go
    ("http://x:/", "getPort", ""),
    ("http://x:/", "getHost", "x:"),
    ("http://%C3%A9.com/", "getHost", "é.com"),
    ("http://a%25b/", "getHost", "a%b"),
    ("mailto:user@example.com", "getScheme", "mailto"),
    ("mailto:user@example.com", "getHost", ""),
    ("mailto:user@example.com", "getEscapedPath", ""),
    ("http://x/a%2fb", "getEscapedPath", "/a%2fb"),
    ("http://x/a%2Fb", "getEscapedPath", "/a%2Fb"),
    ("http://x/%7e", "getEscapedPath", "/%7e"),
    ("http://x/a b%20c", "getEscapedPath", "/a%20b%20c"),
    ("http://x/a?b#c", "getEscapedPath", "/a"),
    ("http://u:p@x/", "getHost", "x"),
    ("http://a@b@x/", "getHost", "x"),  # the last @ ends the userinfo
])
def test_accessors(text: str, part: str, expected: str) -> None:
    assert value(f"url({text!r}).{part}() == {expected!r}")


@pytest.mark.parametrize(("query", "expected"), [
    ("a=1&b=2&a=3", {"a": ["1", "3"], "b": ["2"]}),  # repeated keys keep their order
    ("a+b=c+d", {"a b": ["c d"]}),  # + is a space
    ("a%20b=%2B", {"a b": ["+"]}),
    ("a", {"a": [""]}),
    ("a=", {"a": [""]}),
    ("=x", {"": ["x"]}),
    ("&&a=1&", {"a": ["1"]}),
    ("a=1;b=2&c=3", {"c": ["3"]}),  # a setting with ; is dropped (Go 1.17 on)
    ("a=%zz&b=1", {"b": ["1"]}),  # a setting that does not unescape is dropped
    ("a=%4", {}),
    ("k=%C3%A9", {"k": ["é"]}),
    ("x=1" + "&" * 9999, {"x": ["1"]}),  # 10,000 parameters
    ("x=1" + "&" * 10_000, {}),  # more than 10,000: none (urlmaxqueryparams)
])
def test_get_query_is_go_url_query(query: str, expected: dict[str, list[str]]) -> None:
    items = ", ".join(f"{key!r}: {values!r}" for key, values in expected.items())
    assert value(f"url('/p?{query}').getQuery() == {{{items}}}")


# Upstream's message: "URL parse error during conversion from string: " + Go's url.Error.
@pytest.mark.parametrize(("text", "message"), [
    ("", 'parse "": empty url'),
    ("x", 'parse "x": invalid URI for request'),
    ("../relative-path", 'parse "../relative-path": invalid URI for request'),
    ("example.com/path", 'parse "example.com/path": invalid URI for request'),
    ("://x", 'parse "://x": missing protocol scheme'),
    ("http://x/a\tb", 'parse "http://x/a\\tb": net/url: invalid control character in URL'),
    ("http://x/%zz", 'parse "http://x/%zz": invalid URL escape "%zz"'),
    ("http://x/%4", 'parse "http://x/%4": invalid URL escape "%4"'),
    ("http://x/%zé", 'parse "http://x/%zé": invalid URL escape "%z\\xc3"'),
    ("http://%41/", 'parse "http://%41/": invalid URL escape "%41"'),  # ASCII in a host
    ("https://a:b:c/", 'parse "https://a:b:c/": invalid port ":b:c" after host'),
    ("http://x:8a/", 'parse "http://x:8a/": invalid port ":8a" after host'),
    ("http://::1/", 'parse "http://::1/": invalid port "::1" after host'),
    ("http://[::1/", 'parse "http://[::1/": missing \']\' in host'),
    ("http://[::1]x/", 'parse "http://[::1]x/": invalid port "x" after host'),
    ("http://x[::1]/", 'parse "http://x[::1]/": invalid IP-literal'),
    ("https://[1.2.3.4]/", 'parse "https://[1.2.3.4]/": invalid IP-literal'),
    ("https://[v1.x]/", 'parse "https://[v1.x]/": invalid host: ParseAddr("v1.x"): '
     'unexpected character (at "v1.x")'),
    ("http://[fe80::1%en0]/", 'parse "http://[fe80::1%en0]/": invalid URL escape "%en"'),
    ("http://[fe80::1%25%0A]/", 'parse "http://[fe80::1%25%0A]/": invalid URL escape "%0A"'),
    ("http://a{b}/", 'parse "http://a{b}/": invalid character "{" in host name'),
    ("http://a b/", 'parse "http://a b/": invalid character " " in host name'),
    ("https://ü@example.com/", 'parse "https://ü@example.com/": net/url: invalid userinfo'),
    ("http://a%zz@x/", 'parse "http://a%zz@x/": invalid URL escape "%zz"'),
    ("http://x/?q#%zz", 'parse "http://x/?q#%zz": invalid URL escape "%zz"'),  # url.Parse's
])
def test_parse_errors_are_upstreams(text: str, message: str) -> None:
    full = f"URL parse error during conversion from string: {message}"
    assert runtime_error(f"url({text!r}).getScheme() == ''") == full
    assert value(f"isURL({text!r})") is ("#" in text)  # isURL is ParseRequestURI only


def test_is_url_is_parse_request_uri_only() -> None:
    # ParseRequestURI does not cut a fragment: "#%zz" is part of the query, not checked.
    assert request_uri_error("http://x/?q#%zz") is None
    assert request_uri_error("x") == 'parse "x": invalid URI for request'


@pytest.mark.parametrize(("expression", "message", "column"), [
    ("url('/a') < url('/b')",
     "found no matching overload for '_<_' applied to '(kubernetes.URL, kubernetes.URL)'", 11),
    ("url('/a') == '/a'",
     "found no matching overload for '_==_' applied to '(kubernetes.URL, string)'", 11),
    ("string(url('/a')) == '/a'",
     "found no matching overload for 'string' applied to '(kubernetes.URL)'", 7),
    ("url(1).getHost() == ''", "found no matching overload for 'url' applied to '(int)'", 4),
    # upstream writes a member call's types as 'string.()' (all member functions, a
    # deviation of the CEL library's words, docs/cel.md)
    ("'/a'.getHost() == ''",
     "found no matching overload for 'getHost' applied to '(string)'", 13),
    ("url('/a').getQuery()['x'] == 'y'",
     "found no matching overload for '_==_' applied to '(list(string), string)'", 27),
    ("kubernetes.URL{} == url('/')",
     "undeclared reference to 'kubernetes.URL' (in container '')", 15),
    ("type(url('/')) == kubernetes.URL",
     "undeclared reference to 'kubernetes' (in container '')", 19),
])
def test_compile_errors_are_upstreams(expression: str, message: str, column: int) -> None:
    error = compile_error(expression)
    assert (error.message, error.line, error.column) == (message, 1, column)


def test_selectors_read_urls_from_device_attributes() -> None:
    driver = "net.example.com"
    device = {"name": "nic-0", "attributes": {"endpoint": {"string": "https://[fd00::1]:8443/v1"}}}
    selector = compile_device_selector(
        f'isURL(device.attributes["{driver}"].endpoint) && '
        f'url(device.attributes["{driver}"].endpoint).getPort() == "8443" && '
        f'url(device.attributes["{driver}"].endpoint).getHostname() == "fd00::1"')
    assert selector.matches(driver, device)
    other = {"name": "nic-1", "attributes": {"endpoint": {"string": "https://[fd00::1]/v1"}}}
    assert not selector.matches(driver, other)


def test_a_v1_class_and_claim_select_with_both_libraries_through_the_allocator() -> None:
    # The allocator's selector path (compile_device_selector for every class and request
    # selector): the class keeps devices whose endpoint is an https URL, the request those
    # whose "zone" attribute is a DNS label.
    devices = [device("plain", endpoint="http://10.0.0.1/", zone="a"),
               device("bad-zone", endpoint="https://10.0.0.2/", zone="Zone_B"),
               device("good", endpoint="https://[fd00::3]:8443/", zone="zone-c")]
    attributes = f'device.attributes["{DRIVER}"]'
    gpu = device_class("gpu", f'url({attributes}.endpoint).getScheme() == "https"')
    allocator = Allocator(make_profile("1.36"), slices=[slice_("s", devices)], classes=[gpu])
    wanted = request("r", "gpu", 1,
                     f"!format.dns1123Label().validate({attributes}.zone).hasValue()")
    outcome = allocator.allocate(node(), [claim("c0", wanted)])
    assert [r["device"] for r in outcome.allocations[0]["devices"]["results"]] == ["good"]


@pytest.mark.parametrize("expression", [
    # String() writes a path starting with // and no authority: the text alone would read
    # back with a host. url("/%2Fé") measured against upstream (cel-go in Kubernetes 1.36's
    # environment); the others follow from Go's url.go the same way.
    'url("/%2Fé").getHost() == ""',
    'url("/%2Fé").getEscapedPath() == "//%C3%A9"',
    'url("/%2F[é").getEscapedPath() == "//%5B%C3%A9"',
    'url("/%2Fhttp:é").getHost() == ""',
    'url("/%2Fé?a=b").getQuery() == {"a": ["b"]}',
    'url("http:/%2Fé").getHost() == ""',  # OmitHost: no // after the scheme either
    'url("http:/%2Fé").getEscapedPath() == "//%C3%A9"',
    'url("//é").getHost() == "é"',
    # Equality stays that of String(), as upstream's URL.Equal.
    'url("/%2Fé") == url("//é")',
    'url("http:/%2Fé") == url("http://é")',
    'url("/%2Fé") != url("/%2Fx")',
])
def test_a_url_whose_text_drops_its_empty_authority_keeps_its_parts(expression: str) -> None:
    assert value(expression)


_PIECES = st.sampled_from(["http:", "ftp:", "//", "/", "?", "#", "@", ":", "[", "]", "%", "%2F",
                           "%25", "%41", "%C3%A9", "é", "a", "B", "1", "&", "=", ";", "+", " ",
                           "[::1]", "[fe80::1%25en0]", "x.y", "80", "!", "'", "*", "~"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=12).map("".join))
def test_a_url_value_parses_again_to_the_same_parts(text: str) -> None:
    # The value is Go's String(); the accessors read it again with url.Parse (without an
    # authority where String() dropped it), which must give back the original fields.
    try:
        canonical = url_text(text)
    except ValueError:
        return
    first = parse_url(text.encode())
    again = parse_url(canonical.encode(), not canonical.drops_authority)
    assert again.string() == canonical.encode()
    assert (first.scheme, first.host, first.escaped_path(), first.raw_query) == (
        again.scheme, again.host, again.escaped_path(), again.raw_query)
