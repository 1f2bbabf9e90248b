"""Go standard-library behaviour that upstream's CEL error messages depend on.

Kubernetes' CEL libraries are Go: their messages quote values with ``%q``
(``strconv.Quote``), and some quote byte strings that are not valid UTF-8 (net/url's
``invalid URL escape "%z\\xc3"``). Shared by the IP/CIDR (``_net``) and URL (``_url``)
libraries, so there is one home for Go's quoting.
"""

from __future__ import annotations

__all__ = ["quote"]

_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
            "\v": "\\v", '"': '\\"', "\\": "\\\\"}


def quote(text: str | bytes) -> str:
    """Go's ``strconv.Quote`` (and ``%q``) of a string or of raw bytes: Python's printable
    characters are Go's ``unicode.IsPrint`` (letters, marks, numbers, punctuation, symbols
    and ASCII space); a byte that is not part of valid UTF-8 is ``\\xNN``, as Go prints it.
    In a str, U+DC80..U+DCFF stand for such bytes (Python's ``surrogateescape``).

    Returns:
        The quoted text, with its double quotes.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    out = []
    for char in text:
        code = ord(char)
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif 0xDC80 <= code <= 0xDCFF:  # an undecodable byte
            out.append(f"\\x{code - 0xDC00:02x}")
        elif char.isprintable():
            out.append(char)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'
