"""allocation.views.pages: the live pages render the stored cluster (snapshot patched)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from allocation.presenters import live
from allocation.services import reconcile as passes
from allocation.services.cluster import revision
from allocation.services.manifests import import_texts
from tests import factories as f
from tests.allocation.presenters.docs import cluster_docs, cluster_state, v1_state


@pytest.fixture
def stored(monkeypatch):
    state = cluster_state()
    monkeypatch.setattr(live, "snapshot", lambda: (state, 7))
    monkeypatch.setattr(live, "node_snapshot", lambda _name: (state, 7))  # the node page's
    return state


def _pod_html(client, monkeypatch, state, name: str) -> str:
    """The page of pod ``default/name`` in ``state`` (the live snapshot patched)."""
    monkeypatch.setattr(live, "snapshot", lambda: (state, 3))
    return client.get(reverse("allocation:pod", args=["default", name])).content.decode()


def _pages() -> list[tuple[str, str]]:
    return [
        (reverse("allocation:node", args=["gpu-node"]), "Node gpu-node"),
        (reverse("allocation:claim", args=["default", "net"]), "ResourceClaim default/net"),
        (reverse("allocation:pod", args=["default", "waiting"]), "Why it is pending"),
        (reverse("allocation:negotiations"), "Control-plane negotiations"),
    ]


@pytest.mark.django_db
def test_every_page_renders_live(admin_client, stored):
    for url, text in _pages():
        response = admin_client.get(url)

        assert response.status_code == 200, url
        html = response.content.decode()
        assert text in html, url
        # The page's socket mirrors its path and says which revision it shows.
        assert f'ws-connect="/ws/pages{url}?rev=7"' in html, url
        assert 'hx-ext="ws"' in html
        assert "hx-swap-oob" not in html  # only socket messages swap out of band


@pytest.mark.django_db
def test_dashboard_groups_pending_pods_by_reason(admin_client):
    import_texts([("a.yaml", f.to_yaml(cluster_docs()))])
    passes.reconcile()  # writes the read model the dashboard reads

    response = admin_client.get(reverse("allocation:dashboard"))

    html = response.content.decode()
    assert f'ws-connect="/ws/pages/dashboard/?rev={revision()}"' in html
    assert ("<summary><strong>2 pods</strong>: <span class=\"reason\">0/2 nodes are "
            "available: 2 cannot allocate all claims.</span></summary>") in html
    assert ('<li data-pod="default/waiting"><a href="/pods/default/waiting/">default/waiting'
            '</a></li>') in html
    assert '<a href="/nodes/gpu-node/" class="u3" title="gpu-node: 57% in use"></a>' in html


@pytest.mark.django_db
def test_pod_page_explains_in_words(admin_client, stored):
    html = admin_client.get(reverse("allocation:pod", args=["default", "waiting"])
                            ).content.decode()

    assert ('<a href="/nodes/card-node/">card-node</a>: needs 1 device of class cards; no free '
            'device matches <span class="muted">(cannot allocate all claims)</span>') in html
    assert "allocated to claim default/card-a" in html
    # every filter on every node, computed for the page
    assert '<td class="check failed" data-plugin="DynamicResources">failed: needs 1 device' \
        in html


@pytest.mark.django_db
def test_pod_page_of_a_gated_pod_names_its_gates(admin_client, monkeypatch):
    gated = f.pod("gated")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/quota"}]
    html = _pod_html(admin_client, monkeypatch, f.run([f.node("n"), gated]).state, "gated")

    assert ('<dt>Scheduling gates</dt><dd class="scheduling-gates"><code>example.com/quota'
            '</code> <span class="muted">(not scheduled until every gate is removed)</span>'
            '</dd>') in html
    assert ('<p class="summary">Scheduling is blocked due to non-empty scheduling gates</p>'
            in html)


@pytest.mark.django_db
def test_pod_page_explains_a_v1_pod_per_node_request_and_device(admin_client, monkeypatch):
    sel = 'device.attributes["gpu.example.com"].model == "c"'
    html = _pod_html(admin_client, monkeypatch, v1_state(sel), "v1-waiting")

    assert '<a href="/nodes/node-1/">node-1</a>: needs 1 device of class gpu; no free' in html
    assert ('<a href="/claims/default/v1-claim/">default/v1-claim</a> <code>r</code> '
            "(class gpu): None of the node&#x27;s 2 candidate(s) is free and matches.") in html
    assert ("<li>gpu.example.com/node-1/gpu-0, gpu.example.com/node-1/gpu-1: request "
            "selector `device.attributes[&quot;gpu.example.com&quot;].model == "
            "&quot;c&quot;` is false</li>") in html


@pytest.mark.django_db
def test_pod_page_names_what_a_cel_runtime_error_read(admin_client, monkeypatch):
    sel = 'device.attributes["gpu.example.com"].cores > 1'
    html = _pod_html(admin_client, monkeypatch, v1_state(sel, "big"), "v1-waiting")

    assert ("The scheduling attempt failed (SchedulerError) on claim "
            '<a href="/claims/default/v1-claim/">default/v1-claim</a>, request <code>big</code>, '
            "device <code>gpu.example.com/node-1/gpu-0</code>:") in html
    assert ("request selector #0 <code>device.attributes[&quot;gpu.example.com&quot;].cores "
            "&gt; 1</code> failed: no such key: cores") in html


@pytest.mark.django_db
def test_htmx_request_gets_the_page_body_only(admin_client, stored):
    response = admin_client.get(reverse("allocation:node", args=["gpu-node"]),
                                headers={"HX-Request": "true"})

    html = response.content.decode()
    assert 'id="node-devices"' in html
    assert "<html" not in html and "ws-connect" not in html


@pytest.mark.django_db
def test_missing_objects_are_404(admin_client, stored):
    for url in (reverse("allocation:node", args=["nope"]),
                reverse("allocation:claim", args=["default", "nope"]),
                reverse("allocation:pod", args=["default", "nope"]),
                reverse("allocation:provisioning_request", args=["default", "nope"])):
        assert admin_client.get(url).status_code == 404, url


@pytest.mark.django_db
def test_pages_require_login(client, stored):
    for url, _text in _pages():
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/"), url


@pytest.mark.django_db
def test_event_tables_show_a_series_as_kubectl_does(admin_client, stored):
    series = {
        "apiVersion": "v1", "kind": "Event", "type": "Warning", "reason": "NotTriggerScaleUp",
        "message": "pod didn't trigger scale-up", "count": 12,
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:11:00Z",
        "metadata": {"name": "waiting.00000099", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "waiting"},
        "source": {"component": "cluster-autoscaler"}}
    stored.events.items.append(series)  # the pod page reads the (patched) snapshot
    import_texts([("e.yaml", f.to_yaml([series]))])  # the dashboard and the list: the rows
    for url in (reverse("allocation:dashboard"),
                reverse("allocation:pod", args=["default", "waiting"])):
        html = admin_client.get(url).content.decode()
        assert "<th>Last seen</th>" in html and "<th>Count</th>" in html, url
        assert ('title="first seen 2026-01-01T00:00:00Z">2026-01-01T00:11:00Z</td>' in html), url
        assert '<td class="num">12</td>' in html, url
    html = admin_client.get(reverse("allocation:events_list")).content.decode()
    headings = [h.strip() for h in re.findall(r"<th(?:\s[^>]*)?>\s*(?:<a [^>]*>)?([^<]*)", html)]
    assert headings[-3:] == ["Message", "Count", "First seen"] and headings[0] == "Last seen"
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", html)
    assert cells[0] == "2026-01-01T00:11:00Z" and cells[-2:] == ["12", "2026-01-01T00:00:00Z"]
