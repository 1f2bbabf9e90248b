"""Property tests of allocation over random clusters, checked against a brute-force oracle.

- no device of a non-shareable allocation is ever given to a second claim;
- every allocated device satisfies its request's selector and the class filters;
- a pod is left unscheduled only when no node admits a full placement of its claims.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.factories import (
    claim_parameters,
    claim_template,
    class_parameters,
    device,
    named_slice,
    node,
    pod,
    resource_class,
    run,
)

# Selectors and the Python predicates they mean (the oracle's own reading).
SELECTORS = {
    'quantities["memory"] >= "16Gi"': lambda d: d["memory"] >= 16,
    'quantities["memory"] <= "16Gi"': lambda d: d["memory"] <= 16,
    'strings["model"] == "a"': lambda d: d["model"] == "a",
    'ints["index"] % 2 == 0': lambda d: d["index"] % 2 == 0,
    "true": lambda d: True,
}
FILTER = 'quantities["memory"] >= "8Gi"'

devices_st = st.lists(st.tuples(st.sampled_from([4, 8, 16, 32]), st.sampled_from(["a", "b"])),
                      max_size=4)
claims_st = st.lists(st.lists(st.sampled_from(sorted(SELECTORS)), min_size=1, max_size=2),
                     min_size=1, max_size=2)


def _docs(nodes, pods, with_filter):
    docs = [resource_class("gpu", params="filter" if with_filter else None)]
    if with_filter:
        docs.append(class_parameters("filter", FILTER))
    specs = {}
    for n, devices in enumerate(nodes):
        docs.append(node(f"n{n}"))
        entries = []
        for i, (memory, model) in enumerate(devices):
            entries.append(device(f"d{i}", memory=("quantity", f"{memory}Gi"),
                                  model=("string", model), index=("int", i)))
            specs[(f"n{n}", f"d{i}")] = {"memory": memory, "model": model, "index": i}
        docs.append(named_slice(f"n{n}", entries))
    for p, claims in enumerate(pods):
        templates = {}
        for c, selectors in enumerate(claims):
            docs.append(claim_parameters(f"p{p}c{c}", *selectors))
            docs.append(claim_template(f"p{p}c{c}", params=f"p{p}c{c}"))
            templates[f"c{c}"] = f"p{p}c{c}"
        docs.append(pod(f"pod{p}", templates=templates))
    return docs, specs


def _fits(selectors, spec, with_filter):
    return all(SELECTORS[s](spec) for s in selectors) and (not with_filter or spec["memory"] >= 8)


def _oracle_fits(node_name, free, requests, specs, with_filter) -> bool:
    """Brute force: some assignment of distinct free devices to all requests."""
    for chosen in itertools.permutations(free, len(requests)):
        if all(_fits(r, specs[(node_name, d)], with_filter) for r, d in zip(requests, chosen,
                                                                             strict=True)):
            return True
    return False


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(devices_st, min_size=1, max_size=3), st.lists(claims_st, min_size=1, max_size=4),
       st.booleans(), st.sampled_from(["first-fit", "best-fit"]))
def test_allocation_properties(nodes, pods, with_filter, strategy):
    docs, specs = _docs(nodes, pods, with_filter)
    sim = run(docs, strategy)
    state = sim.state
    held: dict[tuple[str, str], str] = {}
    for c in state.claims():
        if c.allocation is None:
            continue
        per_request = [s for s in _claim_selectors(pods, c.name)]
        picks = [cand.id for _, cand in c.allocation.picks]
        assert len(picks) == len(per_request)
        for selectors, device_id in zip(per_request, picks, strict=True):
            key = (c.allocation.node_name, device_id)
            assert key not in held, f"{key} held by {held.get(key)} and {c.name}"
            held[key] = c.name
            assert _fits([selectors], specs[key], with_filter)
    for p_index, claims in enumerate(pods):
        p = state.get("Pod", "default", f"pod{p_index}")
        if p.node_name:
            continue
        requests = [[s] for selectors in claims for s in selectors]
        for n in range(len(nodes)):
            name = f"n{n}"
            free = [f"d{i}" for i in range(len(nodes[n])) if (name, f"d{i}") not in held]
            assert not _oracle_fits(name, free, requests, specs, with_filter), \
                f"pod{p_index} could have been placed on {name}"


def _claim_selectors(pods, claim_name: str) -> list[str]:
    pod_name, _, c = claim_name.partition("-")
    return pods[int(pod_name[3:])][int(c[1:])]
