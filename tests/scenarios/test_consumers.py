"""scenarios.consumers: the scenario socket is private to those who may see the scenario."""

from __future__ import annotations

import json

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


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_the_page_that_made_a_change_gets_no_second_body_and_the_others_do():
    alice, _bob, scenario = await sync_to_async(_setup)()
    path = f"/ws/scenarios/{scenario.pk}/"
    asking, other = _socket(alice, path), _socket(alice, path)
    assert (await asking.connect())[0] and (await other.connect())[0]
    await asking.send_to(text_data=json.dumps({"page": "page-a"}))
    await other.send_to(text_data="not json")  # ignored, as anything but a page id is

    # A change of no page (the API, a refresh) reaches both.
    scenario = await sync_to_async(services.add_change)(
        alice, scenario, {"op": "remove-node", "node": "worker-1"})
    for socket in (asking, other):
        assert 'data-position="1"' in await socket.receive_from(timeout=10)

    # page-a's own change: its answer carries the body; only the other page hears it.
    await sync_to_async(services.undo)(alice, scenario, origin="page-a")
    assert 'data-position="0"' in await other.receive_from(timeout=10)
    assert await asking.receive_nothing(timeout=0.5)
    await asking.disconnect()
    await other.disconnect()
