from __future__ import annotations

from allocation.engine import inventory_cache
from allocation.engine.manifests import load_documents
from allocation.engine.state import ClusterState
from tests.factories import device, named_slice, node


def _state(docs):
    return ClusterState.build(load_documents(("t", d) for d in docs))


def test_states_from_the_same_documents_share_parsing_but_not_holdings():
    docs = [node("n"), named_slice("n", [device("gpu-0", memory=("quantity", "8Gi")),
                                         device("gpu-1")])]
    original = inventory_cache._pristine
    original.clear()
    first, second = _state(docs), _state(docs)
    [a], [b] = first.inventories["n"], second.inventories["n"]
    assert a is not b and [d.id for d in a.devices] == [d.id for d in b.devices]
    assert a.devices[0].data is b.devices[0].data  # parsed once
    a.take(a.devices[0], "ns/c")
    assert b.holder == {} and a.holder == {"gpu-0": "ns/c"}
    assert len(original) == 1
    # Another document with the same content is parsed on its own (identity, not equality).
    third = _state([node("n"), named_slice("n", [device("gpu-0")])])
    assert third.inventories["n"][0].devices[0].data is not a.devices[0].data
