"""WebSocket routes, mounted by ``console.asgi``; every route lives under ``/ws/``.

``/ws/pages/<route>`` is the live socket of the console page at ``/<route>``: one per entry
of ``allocation.presenters.live.PAGES`` (the same entry routes the page itself in
``allocation/urls.py``), whose name the ``page`` keyword carries to the consumer.
"""

from django.urls import URLPattern, URLResolver, path

from allocation.consumers import PageConsumer
from allocation.presenters.live import PAGES
from scenarios.consumers import ScenarioConsumer

_page = PageConsumer.as_asgi()

websocket_urlpatterns: list[URLPattern | URLResolver] = [
    *(path(f"ws/pages/{page.route}", _page, {"page": name}) for name, page in PAGES.items()),
    path("ws/scenarios/<int:scenario_id>/", ScenarioConsumer.as_asgi()),
]
