"""console.asgi: HTTP goes to Django, WebSockets to Channels behind the origin check."""

import pytest
from channels.routing import ProtocolTypeRouter
from channels.security.websocket import OriginValidator
from channels.testing import WebsocketCommunicator
from django.test import AsyncClient


def test_application_routes_http_and_websocket():
    from console.asgi import application

    assert isinstance(application, ProtocolTypeRouter)
    assert set(application.application_mapping) == {"http", "websocket"}
    assert isinstance(application.application_mapping["websocket"], OriginValidator)


@pytest.mark.asyncio
async def test_websocket_from_a_foreign_origin_is_refused():
    from console.asgi import application

    communicator = WebsocketCommunicator(
        application, "/ws/anything/", headers=[(b"origin", b"https://evil.example")]
    )
    connected, _ = await communicator.connect()
    assert connected is False


@pytest.mark.asyncio
@pytest.mark.django_db
async def test_unknown_websocket_path_from_an_allowed_origin_has_no_route():
    from console.asgi import application

    communicator = WebsocketCommunicator(
        application, "/ws/nothing-here/", headers=[(b"origin", b"http://localhost")]
    )
    with pytest.raises(ValueError, match="No route found"):
        await communicator.connect()


@pytest.mark.asyncio
@pytest.mark.django_db
async def test_http_home_page_over_asgi():
    # Every page requires login: over ASGI an anonymous visitor is sent to the login page.
    response = await AsyncClient().get("/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/"
