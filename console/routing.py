"""WebSocket routes, mounted by ``console.asgi``; every route lives under ``/ws/``.

``/ws/pages<page path>`` is the live socket of the console page at ``<page path>`` (the
page's template connects to it); the ``page`` keyword names the entry of
``allocation.presenters.live.PAGES`` it serves.
"""

from django.urls import URLPattern, URLResolver, path

from allocation.consumers import PageConsumer
from scenarios.consumers import ScenarioConsumer

_page = PageConsumer.as_asgi()

websocket_urlpatterns: list[URLPattern | URLResolver] = [
    path("ws/pages/dashboard/", _page, {"page": "dashboard"}),
    path("ws/pages/nodes/<str:name>/", _page, {"page": "node"}),
    path("ws/pages/claims/<str:namespace>/<str:name>/", _page, {"page": "claim"}),
    path("ws/pages/pods/<str:namespace>/<str:name>/", _page, {"page": "pod"}),
    path("ws/pages/provisioningrequests/<str:namespace>/<str:name>/", _page,
         {"page": "provisioning_request"}),
    path("ws/pages/negotiations/", _page, {"page": "negotiations"}),
    path("ws/scenarios/<int:scenario_id>/", ScenarioConsumer.as_asgi()),
]
