"""The console with a resource.k8s.io/v1 cluster, end to end through the Django test client:
upload, a worker pass, then the node, claim, DeviceClass and ResourceSlice pages."""

from __future__ import annotations

import re

import pytest

from allocation.services import reconcile
from tests.factories import to_yaml
from tests.v1_cluster import DRIVER, cluster

pytestmark = pytest.mark.django_db


@pytest.fixture
def reconciled(admin_client):
    response = admin_client.post("/upload/", {"text": to_yaml(cluster())}, follow=True)
    assert "Imported: 8 created" in response.content.decode()
    assert reconcile.reconcile().outcome == reconcile.SAVED
    return admin_client


def _row(html: str, attribute: str, value: str) -> str:
    found = re.search(rf'<tr {attribute}="{re.escape(value)}"[^>]*>(.*?)</tr>', html, re.S)
    assert found, f"no row {attribute}={value}"
    return found.group(1)


def test_the_node_page_shows_the_allocation(reconciled):
    html = reconciled.get("/nodes/n1/").content.decode()
    assert 'id="node-v1-devices"' in html and f"{DRIVER} pool n1" in html
    half = _row(html, "data-device", "gpu-0-a")
    assert 'data-state="allocated"' in re.search(r'<tr data-device="gpu-0-a"[^>]*>',
                                                 html).group(0)
    assert '<a class="claim" href="/claims/default/c1/">default/c1</a>' in half
    assert "<code>model=a100</code>" in half and "<code>memory</code> 40Gi" in half
    assert "free" in _row(html, "data-device", "gpu-0-b")
    nic = _row(html, "data-device", "nic-0")
    assert "2G in use" in nic and 'aria-label="2G of 10G in use"' in nic
    assert "<code>bandwidth=1953125Ki</code>" in nic
    counter = _row(html, "data-counter", "gpu-0-counters/memory")
    assert "40Gi / 80Gi" in counter and 'style="width: 50%"' in counter
    assert '<a href="/claims/default/c1/">default/c1</a>' in html  # claims allocated here
    assert "This node publishes no DRA resources" not in html


def test_the_claim_page_shows_results_selector_and_reservation(reconciled):
    html = reconciled.get("/claims/default/net/").content.decode()
    assert 'data-claim-state="reserved"' in html
    result = _row(html, "data-device", "nic-0")
    cells = re.findall(r"<td>(.*?)</td>", result, re.S)
    assert cells[:5] == ["gpu", DRIVER, "n1", "<code>nic-0</code>", "no"]
    assert re.fullmatch(r"[0-9a-f-]{36}", cells[5])  # the shareID
    assert "<code>bandwidth=1953125Ki</code>" in cells[6]
    assert "<code>metadata.name In [n1]</code>" in html
    assert '<a href="/pods/default/p1/">p1</a>' in html
    assert '<a href="/deviceclasses/nic/">nic</a>' in html


def test_device_class_and_slice_pages(reconciled):
    listing = reconciled.get("/deviceclasses/").content.decode()
    assert '<a href="/deviceclasses/gpu/">gpu</a>' in _row(listing, "data-class", "gpu")
    detail = reconciled.get("/deviceclasses/nic/").content.decode()
    assert '<a href="/claims/default/net/">default/net</a>' in detail
    slices = reconciled.get("/resourceslices/").content.decode()
    assert '<a href="/nodes/n1/">n1</a>' in _row(slices, "data-slice", "n1-gpus")
    piece = reconciled.get("/resourceslices/n1-gpus/").content.decode()
    assert "default/c1" in _row(piece, "data-device", "gpu-0-a")
    assert reconciled.get("/resourceslices/nope/").status_code == 404
    assert reconciled.get("/deviceclasses/nope/").status_code == 404


def test_the_pod_page_links_its_v1_claims_with_their_state(reconciled):
    html = reconciled.get("/pods/default/p1/").content.decode()
    assert '<a href="/claims/default/c1/">' in html
    assert 'data-status="claim:reserved"' in html and "not created yet" not in html
