"""Go's strconv.Quote (allocation/engine/cel/_go.py), which upstream's CEL messages use."""

from __future__ import annotations

import pytest

from allocation.engine.cel._go import quote


@pytest.mark.parametrize(("text", "quoted"), [
    ("abc", '"abc"'),
    ('a"b\\c', '"a\\"b\\\\c"'),
    ("\t\n\x00\x7f", '"\\t\\n\\x00\\x7f"'),
    ("é٤", '"é٤"'),  # printable letters and digits of any script stay
    ("\u200b", '"\\u200b"'),  # a format character is escaped
    (b"%z\xc3", '"%z\\xc3"'),  # a byte that is not UTF-8 (net/url's EscapeError)
    (b"\xc3\xa9\xff", '"é\\xff"'),
    (b"\xed\xa0\x80", '"\\xed\\xa0\\x80"'),  # an encoded surrogate is three bad bytes to Go
])
def test_quote_is_go_strconv_quote(text: str | bytes, quoted: str) -> None:
    assert quote(text) == quoted
