"""allocation.presenters.live: fragments for the socket, marked for out-of-band swaps."""

from __future__ import annotations

import re

import pytest

from allocation.engine.manifests import load_texts
from allocation.engine.simulation import simulate
from allocation.presenters import live
from tests import factories as f
from tests import v1_cluster as v1
from tests.allocation.presenters.docs import cluster_state


def _roots(html: str) -> list[tuple[str, bool]]:
    """(id, has hx-swap-oob) of every element that has an id and opens a fragment."""
    return [(m.group(1), "hx-swap-oob" in m.group(0))
            for m in re.finditer(r'<(?:section|p) id="([\w-]+)"[^>]*>', html)]


@pytest.mark.parametrize(("page", "kwargs", "ids"), [
    pytest.param("dashboard", {}, ["dashboard-nodes", "dashboard-usage", "dashboard-pending",
                                   "dashboard-provisioning", "dashboard-events"],
                 marks=pytest.mark.django_db),  # read from the read model's (empty) rows
    ("node", {"name": "gpu-node"}, ["node-summary", "node-devices", "node-v1-devices",
                                    "manifest-yaml"]),
    ("claim", {"namespace": "default", "name": "net"}, ["claim-detail", "manifest-yaml"]),
    ("pod", {"namespace": "default", "name": "waiting"}, ["pod-detail",
                                                          "negotiation-timeline",
                                                          "manifest-yaml"]),
    ("negotiations", {}, ["negotiation-timelines"]),
])
def test_every_fragment_of_a_page_is_sent_out_of_band(page, kwargs, ids) -> None:
    html = live.render_fragments(page, kwargs, cluster_state(), 42)

    assert _roots(html) == [("live-status", True)] + [(i, True) for i in ids]
    assert "revision 42" in html


@pytest.mark.parametrize(("page", "kwargs", "ids"), [
    ("device_classes", {}, ["device-class-list"]),
    ("resource_slices", {}, ["resource-slice-list"]),
    ("device_class", {"name": "gpu"}, ["device-class-detail", "manifest-yaml"]),
    ("resource_slice", {"name": "n1-gpus"}, ["resource-slice-detail", "manifest-yaml"]),
    ("node", {"name": "n1"}, ["node-summary", "node-devices", "node-v1-devices",
                              "manifest-yaml"]),
    ("claim", {"namespace": "default", "name": "c1"}, ["claim-detail", "manifest-yaml"]),
])
def test_every_fragment_of_a_v1_page_is_sent_out_of_band(page, kwargs, ids) -> None:
    state = simulate(load_texts([("v1.yaml", f.to_yaml(v1.cluster()))])).state
    html = live.render_fragments(page, kwargs, state, 42)

    assert _roots(html) == [("live-status", True)] + [(i, True) for i in ids]
    assert "revision 42" in html


def test_node_fragment_draws_the_tree_with_the_claim() -> None:
    html = live.render_fragments("node", {"name": "gpu-node"}, cluster_state(), 1)

    leaf = re.search(r'<div class="box instance allocated" data-id="gpu-0/halves/half-0".*?'
                     r'<a class="claim" href="/claims/default/half-a/">default/half-a</a>',
                     html, re.S)
    assert leaf is not None
    assert 'data-id="gpu-0/whole/full" data-status="blocked"' in html


def test_a_page_whose_object_is_gone_says_so() -> None:
    html = live.render_fragments("pod", {"namespace": "default", "name": "gone"},
                                 cluster_state(), 9)

    assert _roots(html) == [("live-status", True)]
    assert "no longer exists" in html


@pytest.mark.django_db  # the pod page looks for the pod's rows first (none: the baseline)
def test_render_live_reads_the_stored_cluster(monkeypatch) -> None:
    monkeypatch.setattr(live, "snapshot", lambda: (cluster_state(), 5))

    html, revision = live.render_live("pod", {"namespace": "default", "name": "waiting"})

    assert revision == 5
    assert "0/2 nodes are available: 2 cannot allocate all claims." in html


@pytest.mark.django_db
def test_the_dashboard_builds_no_state(monkeypatch) -> None:
    def refuse():
        raise AssertionError("the dashboard must not build a cluster state")

    monkeypatch.setattr(live, "snapshot", refuse)

    html, revision = live.render_live("dashboard", {})

    assert revision == 0 and 'id="dashboard-pending"' in html
