"""Golden tests of spec section 3.3 (search), 3.7 (admin access) and 3.12 (differences
between releases), written from the spec text: small clusters, exact results."""

from __future__ import annotations

from tests.allocation.engine.v1.builders import (
    allocator,
    claim,
    device,
    node,
    slice_,
)


def _empty(name: str) -> dict:
    c = claim(name)
    c["spec"]["devices"]["requests"] = []
    return c


def test_claim_without_requests_fits_on_a_node_without_pools():
    # 3.3: the search walks claims -> requests; a claim with none is done at once
    a = allocator([slice_("s", [device("d0")], node="node-1")])
    out = a.allocate(node("node-2"), [_empty("c0")])
    assert out.allocations == [{"devices": {"results": []}}]
    assert a.first_fit([node("node-2"), node("node-3")], [_empty("c1")])[0] == node("node-2")
