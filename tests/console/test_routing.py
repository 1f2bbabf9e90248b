"""console.routing and allocation.urls: both routes of every live page come from PAGES."""

from django.urls import resolve, reverse

from allocation.presenters.live import PAGES
from console.routing import websocket_urlpatterns

EXAMPLE_KWARGS = {"name": "n1", "namespace": "team-a"}


def _sample(route: str) -> tuple[str, dict]:
    kwargs = {key: value for key, value in EXAMPLE_KWARGS.items() if f":{key}>" in route}
    path = route
    for key, value in kwargs.items():
        path = path.replace(f"<str:{key}>", value)
    return path, kwargs


def test_every_live_page_has_its_page_route_and_its_socket_route():
    for name, page in PAGES.items():
        path, kwargs = _sample(page.route)
        assert reverse(f"allocation:{name}", kwargs=kwargs) == f"/{path}"
        assert resolve(f"/{path}").kwargs == {"page": name, **kwargs}
        sockets = [p for p in websocket_urlpatterns if p.resolve(f"ws/pages/{path}")]
        assert len(sockets) == 1, name
        assert sockets[0].resolve(f"ws/pages/{path}").kwargs == {"page": name, **kwargs}
