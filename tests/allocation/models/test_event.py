from __future__ import annotations

import hashlib
import json

from hypothesis import given
from hypothesis import strategies as st

from allocation.engine.events import series_key
from allocation.models.event import series_hash

# any text, lone surrogates and control characters included, and the texts that send a
# document to the standard library's writer (``null``, exponents)
_TEXT = st.one_of(st.text(), st.sampled_from(["null", "1e-05", "\ud800", "é\n\t\"\\", ""]))


@given(kind=_TEXT, namespace=_TEXT, name=_TEXT, type_=_TEXT, reason=_TEXT, component=_TEXT)
def test_the_series_hash_is_the_one_stored_rows_were_given(kind, namespace, name, type_,
                                                           reason, component):
    """Stored rows carry hashes of the standard library's text (the series migration made
    them so): the faster writer must give the same hash for every series."""
    event = {"involvedObject": {"kind": kind, "namespace": namespace, "name": name},
             "type": type_, "reason": reason, "source": {"component": component}}
    text = json.dumps(series_key(event), separators=(",", ":"), ensure_ascii=False)
    expected = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    assert series_hash(event) == expected
