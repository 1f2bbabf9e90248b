"""WebSocket routes, mounted by ``console.asgi``.

Every route lives under ``/ws/``, for example::

    from django.urls import path
    from allocation import consumers

    websocket_urlpatterns = [
        path("ws/simulations/<int:pk>/", consumers.SimulationConsumer.as_asgi()),
    ]
"""

from django.urls import URLPattern, URLResolver

websocket_urlpatterns: list[URLPattern | URLResolver] = []
