"""The v1 allocator against a brute-force oracle written from the spec (section 3).

Random small clusters (``random_clusters``) are scheduled as the planner's scheduler does
(nodes in name order, each fit committed). For every node tried:

- a fit must obey every rule of spec section 3, checked by the oracle (``spec_devices.py``,
  ``spec_oracle.py``) from the spec text without the allocator's code: visible pools (3.2),
  selectors, taints (3.6), the "in use" rules with admin access (3.3 step 1, 3.7), one
  device per slot of a request (3.12: a multi-allocatable device may fill two slots of one
  request only before 1.36), capacity (3.5), counters (3.4), matchAttribute, and an ``All``
  request taking exactly its listed devices;
- a "does not fit" (not a fatal error) must be confirmed by the oracle: an independent
  depth-first enumeration of every assignment (a choice of subrequest per request and of
  devices per slot) finds none on that node.

Upstream's search is exhaustive, so the two agree except where the spec says upstream may
miss an assignment on purpose; the oracle comparison is skipped for those clusters:
``All`` requests (a fixed device list, the first failure ends the request),
distinctAttribute (it forgets values: 3.3, 3.12), and shared counters together with taints,
constraints or multi-allocatable devices (counters stay consumed after a taint or
constraint refusal, and multi-allocatable devices never give theirs back on backtracking:
docs/v1.md "Where the planner knowingly follows upstream's bugs"). Fits are checked in
every cluster (distinctAttribute only for the attribute's presence). Per-device node
selection is part of the clusters: a device of such a slice is usable only on its node.
Release 1.34 (legacy pools) is only run for crashes and determinism, in
``test_properties``.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from allocation.engine.v1 import Allocator
from tests.allocation.engine.v1.random_clusters import Cluster, clusters, schedule
from tests.allocation.engine.v1.spec_oracle import Rules, check_fit, exists

SETTINGS = settings(max_examples=80, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.data_too_large])


def _run(cluster: Cluster) -> tuple[int, int]:
    alloc = Allocator(cluster.profile, slices=cluster.slices, classes=cluster.classes)
    compared = [0, 0]

    def on_attempt(node, claims, outcome, committed):
        if isinstance(outcome, Exception):
            return
        rules = Rules(cluster, node, claims, committed)
        if outcome.fits:
            check_fit(rules, outcome)
            compared[0] += 1
            return
        if rules.oracle_applies():
            found = exists(rules)
            if not rules.cel_error:
                assert not found, "the oracle found an allocation the allocator missed"
                compared[1] += 1

    schedule(alloc, cluster.nodes, cluster.pods, on_attempt)
    return compared[0], compared[1]


@SETTINGS
@given(clusters("1.36"))
def test_136_fits_obey_the_spec_and_misses_are_confirmed(cluster):
    _run(cluster)


@SETTINGS
@given(clusters("1.35"))
def test_135_default_fits_obey_the_spec_and_misses_are_confirmed(cluster):
    _run(cluster)


@SETTINGS
@given(clusters("1.35", "AllAlpha=true"))
def test_135_all_alpha_fits_obey_the_spec_and_misses_are_confirmed(cluster):
    _run(cluster)


@SETTINGS
@given(clusters("1.36", "DRAListTypeAttributes=true"))
def test_136_list_type_attributes_fits_obey_the_spec_and_misses_are_confirmed(cluster):
    _run(cluster)
