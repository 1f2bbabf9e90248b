"""allocation.consumers: live page sockets (authenticated, origin-checked, oob fragments)."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from allocation.presenters import live
from console.routing import websocket_urlpatterns
from tests.allocation.presenters.docs import cluster_state
from tests.factories import node, pod, to_yaml

LOCAL = [(b"origin", b"http://localhost")]


class _User:
    is_authenticated = True


@pytest.fixture
def stored(monkeypatch):
    """The stored cluster at revision 5 (the database is not involved)."""
    state = {"revision": 5, "state": cluster_state()}
    monkeypatch.setattr(live, "current_revision", lambda: state["revision"])
    monkeypatch.setattr(live, "snapshot", lambda: (state["state"], state["revision"]))
    monkeypatch.setattr(live, "node_snapshot",
                        lambda _name: (state["state"], state["revision"]))
    return state


def _write_read_model(state) -> None:
    from django.db import transaction

    from allocation.services import read_model

    with transaction.atomic():
        read_model.sync(state)


def _signed_in(path: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    communicator.scope["user"] = _User()
    return communicator


async def _changed(revision: int) -> None:
    await get_channel_layer().group_send(
        "cluster", {"type": "cluster.changed", "kinds": ["Pod"], "revision": revision})


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_anonymous_socket_is_refused():
    from console.asgi import application

    communicator = WebsocketCommunicator(application, "/ws/pages/dashboard/", headers=LOCAL)
    connected, code = await communicator.connect()

    assert connected is False
    assert code == 4401
    await communicator.disconnect()


@pytest.mark.asyncio
async def test_socket_from_a_foreign_origin_is_refused():
    from console.asgi import application

    communicator = WebsocketCommunicator(application, "/ws/pages/dashboard/",
                                         headers=[(b"origin", b"https://evil.example")])
    connected, _ = await communicator.connect()

    assert connected is False


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_cluster_changed_sends_the_pages_fragments_out_of_band(stored):
    await sync_to_async(_write_read_model)(stored["state"])  # the dashboard reads its rows
    communicator = _signed_in("/ws/pages/dashboard/?rev=5")
    connected, _ = await communicator.connect()
    assert connected
    assert await communicator.receive_nothing(timeout=0.2)  # up to date: nothing to send

    stored["revision"] = 6
    await _changed(6)
    html = await communicator.receive_from(timeout=5)

    assert '<section id="dashboard-pending" class="card" hx-swap-oob="true">' in html
    assert 'id="live-status"' in html and "revision 6" in html
    assert "0/2 nodes are available: 2 cannot allocate all claims." in html

    await _changed(6)  # a revision the page shows already
    assert await communicator.receive_nothing(timeout=0.2)
    await communicator.disconnect()


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_a_page_rendered_before_a_change_is_brought_up_to_date_on_connect(stored):
    communicator = _signed_in("/ws/pages/nodes/gpu-node/?rev=3")
    connected, _ = await communicator.connect()
    assert connected

    html = await communicator.receive_from(timeout=5)

    assert '<section id="node-devices" class="card" hx-swap-oob="true">' in html
    assert "default/half-a" in html
    await communicator.disconnect()


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_detail_page_whose_object_went_away_says_so(stored):
    communicator = _signed_in("/ws/pages/pods/default/gone/?rev=5")
    assert (await communicator.connect())[0]

    stored["revision"] = 6
    await _changed(6)
    html = await communicator.receive_from(timeout=5)

    assert "This object no longer exists" in html
    await communicator.disconnect()


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_an_import_through_the_services_reaches_an_open_page():
    from allocation.services import cluster
    from allocation.services import reconcile as passes
    from allocation.services.manifests import import_texts

    await sync_to_async(import_texts)([("a.yaml", to_yaml([node("n1")]))])
    revision = await sync_to_async(cluster.revision)()
    communicator = _signed_in(f"/ws/pages/dashboard/?rev={revision}")
    assert (await communicator.connect())[0]
    assert await communicator.receive_nothing(timeout=0.2)

    await sync_to_async(import_texts)([("b.yaml", to_yaml([pod("newcomer")]))])
    html = await communicator.receive_from(timeout=5)
    assert f"revision {revision + 1}" in html
    # The dashboard reads the read model, which the worker's pass writes: then it shows.
    await sync_to_async(passes.reconcile)()
    html = await communicator.receive_from(timeout=5)

    assert f"revision {revision + 2}" in html and "(1 bound)" in html
    await communicator.disconnect()
