"""The estimated cost of Kubernetes' CEL libraries, as k8s.io/apiserver
``pkg/cel/library/cost.go`` charges them: quantity and semver (``_k8s``), IP and CIDR
(``_net``), URL (``_url``), format (``_format``), lists (``_lists``) and regex
(``_regex``). ``cost`` walks an expression and asks :func:`library_cost` for each call
(docs/cel.md, "Cost and budgets" and each library's section).
"""

from __future__ import annotations

from allocation.engine.cel._cost_shapes import (
    REGEX_FACTOR,
    SCALAR,
    STRING_FACTOR,
    Shape,
    factor,
    item_of,
    tagged,
)

__all__ = ["NET_TEXT", "FORMAT_NAME", "library_cost"]

NET_TEXT = 43  # the longest canonical IP or CIDR text: eight groups of four hex digits, /128
FORMAT_NAME = 64  # Kubernetes' MaxFormatSize, the bound of a format's name (its equality)
_TAG_TEXT = 1_024  # canonical text may be longer than its source: "1e1000" has 1,001 digits
_ADDRESS_BYTES = 16  # an IPv6 address: upstream's containsIP/containsCIDR compare 2 x 16 bytes
_FORMAT_REGEX = 128  # Kubernetes' MaxNameFormatRegexSize: validate() costs it per character
_UNKNOWN = 2**64 - 1  # cel-go's size of what its estimator cannot size (math.MaxUint64)
_IP, _CIDR = Shape("ip", 1), Shape("cidr", 1)  # net.IP and net.CIDR values (opaque)
#: The URL library's accessors and the format library's constants (``_url``, ``_format``).
_URL_MEMBERS = frozenset({"getScheme", "getHost", "getHostname", "getPort", "getEscapedPath",
                          "getQuery"})
_FORMATS = frozenset({"named", "dns1123Label", "dns1123Subdomain", "dns1035Label",
                      "qualifiedName", "dns1123LabelPrefix", "dns1123SubdomainPrefix",
                      "dns1035LabelPrefix", "labelValue", "uri", "uuid", "byte", "date",
                      "datetime"})
#: Kubernetes' lists library (``_lists``) and the strings extension's functions of two names.
_LIST_FUNCTIONS = frozenset({"isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"})
#: The functions of Kubernetes' IP and CIDR libraries (``_net``), as the tree names them.
_NET_FUNCTIONS = frozenset({
    "ip", "cidr", "isIP", "isCIDR", "isCanonical", "family", "isUnspecified", "isLoopback",
    "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "containsIP",
    "containsCIDR", "masked", "prefixLength",
})


def library_cost(name: str, args: int, shapes: list[Shape]) -> tuple[int, Shape, bool] | None:
    """The cost of a call of ``name`` whose arguments (the receiver first) cost ``args`` and
    have ``shapes``, if it is a function of Kubernetes' libraries.

    Returns:
        (cost with the arguments', the result's shape, whether the call builds the result,
        so that its size counts against the value-size limit), or None for a function of
        no Kubernetes library.
    """
    first = shapes[0].size if shapes else 0
    last = shapes[-1].size if shapes else 0
    if name in ("quantity", "semver", "isQuantity", "isSemver"):
        parse_cost = max(1, factor(last, STRING_FACTOR))
        result = tagged(last + _TAG_TEXT) if name in ("quantity", "semver") else SCALAR
        return args + parse_cost, result, False
    if name in _NET_FUNCTIONS:
        return (*_net(name, args, shapes), False)
    if name in ("url", "validate") or name in _URL_MEMBERS or name in _FORMATS:
        return (*_url_or_format(name, args, shapes), False)
    if name == "value" and shapes and shapes[0].kind == "format":
        return args + 1, shapes[0], False  # format.named(n).value(): a format (its equality)
    if name in _LIST_FUNCTIONS and shapes:
        result = item_of(shapes[0]) if name in ("min", "max") else SCALAR
        return args + _list(shapes[0]), result, False
    if name in ("find", "findAll") and len(shapes) > 1:
        # As matches; the result is no longer than the string, nor are its matches.
        cost = factor(first + 1, STRING_FACTOR) * factor(shapes[1].size, REGEX_FACTOR)
        text = Shape("string", first)
        if name == "find":
            return args + cost, text, False
        return args + cost, Shape("list", first, text), True
    if name in ("add", "sub") and shapes:
        text = max(item_of(s).size for s in shapes)
        return args + 1, tagged(text + _TAG_TEXT), False
    return None


def _url_or_format(name: str, args: int, shapes: list[Shape]) -> tuple[int, Shape]:
    """The URL and format libraries as Kubernetes' estimator charges them (cost.go):
    ``url(s)`` traverses ``s`` and is as large; accessors, ``format.named`` and the
    format constants cost 1 (our tree reads ``format.x()`` as a member call on
    ``format``: its 1 is taken off); ``validate(s)`` traverses ``s`` once per
    character of the longest format regex. A URL's parts are at most its length."""
    size = shapes[-1].size if shapes else 0
    if name == "url":
        return args + factor(size, STRING_FACTOR), Shape("url", size)
    if name == "validate":
        return args + factor(factor(size, STRING_FACTOR), _FORMAT_REGEX * REGEX_FACTOR), SCALAR
    if name in _FORMATS:
        return args, Shape("format", 1)
    text = Shape("string", size)
    if name == "getQuery":
        return args + 1, Shape("map", size, Shape("list", size, text), text)
    return args + 1, text


def _net(name: str, args: int, shapes: list[Shape]) -> tuple[int, Shape]:
    """The IP and CIDR libraries as Kubernetes' estimator charges them
    (k8s.io/apiserver pkg/cel/library/cost.go): parsing a string traverses it,
    ``ip.isCanonical`` twice; accessors cost 1; ``containsIP`` compares two addresses of
    up to 16 bytes, ``containsCIDR`` also a third and the prefix lengths, and a string
    argument adds its parse. cel-go resolves ``ip.isCanonical`` as one function, where
    our tree has a member call on ``ip``: its 1 is taken off."""
    last = shapes[-1].size if shapes else 0
    if name in ("containsIP", "containsCIDR") and len(shapes) == 2:
        cost = factor(2 * _ADDRESS_BYTES, STRING_FACTOR)
        if name == "containsCIDR":
            cost += factor(_ADDRESS_BYTES, STRING_FACTOR) + 1
        if shapes[1].kind != ("ip" if name == "containsIP" else "cidr"):
            cost += factor(last, STRING_FACTOR)  # the string overload (or dyn: either)
        return args + cost, SCALAR
    if name == "isCanonical":
        return args - 1 + factor(last, 2 * STRING_FACTOR), SCALAR
    if len(shapes) == 1 and shapes[0].kind == "cidr":  # members of a CIDR
        return args + 1, {"ip": _IP, "masked": _CIDR}.get(name, SCALAR)
    if name in ("ip", "cidr", "isIP", "isCIDR") and shapes:
        result = {"ip": _IP, "cidr": _CIDR}.get(name, SCALAR)
        return args + factor(last, STRING_FACTOR), result
    return args + 1, SCALAR  # the members of an IP


def _list(target: Shape) -> int:
    """k8s.io/apiserver pkg/cel/library/cost.go for the lists library (and, by name, the
    strings extension's ``indexOf``/``lastIndexOf``): 1 per element, plus traversing
    each string or bytes element, whose size cel-go cannot estimate: its element node has
    no path, and no list of the device is reached by one, so it is unbounded there and
    any such call is over the limit; a string receiver is traversed once."""
    if target.kind != "list":
        return factor(target.size, STRING_FACTOR)
    element = 1
    if item_of(target).kind in ("string", "bytes"):
        element += factor(_UNKNOWN, STRING_FACTOR)
    return min(target.size * element, _UNKNOWN)
