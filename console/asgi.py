"""ASGI entry point: HTTP through Django, WebSockets through Channels.

Serve with ``daphne console.asgi:application`` (``manage.py runserver`` does this
in development because ``daphne`` is first in INSTALLED_APPS).
"""

import os

from django.core.asgi import get_asgi_application

from console.memory import limit_arenas

# Before the server's threads allocate: one malloc arena for all of them (console/memory.py).
limit_arenas()

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

# Initialise Django (app registry, settings) before importing anything that
# touches models, such as the auth middleware or consumers in the routing module.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from console.limits import BodyLimitASGI  # noqa: E402
from console.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        # Never more than DRA_MAX_UPLOAD_BYTES of a request body reaches Django.
        "http": BodyLimitASGI(django_asgi_app),
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)
