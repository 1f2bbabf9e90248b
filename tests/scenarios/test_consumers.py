"""scenarios.consumers: the scenario socket is private to those who may see the scenario."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model

from console.routing import websocket_urlpatterns
from scenarios import services
from tests.scenarios.cluster import store


def _setup():
    store()
    alice = get_user_model().objects.create_user("alice", password="pw")
    bob = get_user_model().objects.create_user("bob", password="pw")
    return alice, bob, services.create(alice, "live")


def _socket(user, path: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    communicator.scope["user"] = user
    return communicator


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_only_those_who_may_see_it_connect_and_changes_arrive_out_of_band():
    alice, bob, scenario = await sync_to_async(_setup)()
    path = f"/ws/scenarios/{scenario.pk}/"

    stranger = _socket(bob, path)
    connected, code = await stranger.connect()
    assert connected is False and code == 4403

    owner = _socket(alice, path)
    connected, _ = await owner.connect()
    assert connected
    await sync_to_async(services.add_change)(alice, scenario, {"op": "remove-node",
                                                               "node": "worker-1"})
    html = await owner.receive_from(timeout=10)
    assert '<div id="scenario-body" data-position="1" hx-swap-oob="true">' in html
    assert "− worker-1" in html
    await owner.disconnect()

    await sync_to_async(services.set_shared)(alice, scenario, True)
    linked = _socket(bob, f"{path}?token={scenario.share_token}")
    connected, _ = await linked.connect()
    assert connected
    await linked.disconnect()
