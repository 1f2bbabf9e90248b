"""Production settings: the development settings with DEBUG off and HTTPS hardening.

Use with ``DJANGO_SETTINGS_MODULE=console.settings_production``. Requires
``DJANGO_SECRET_KEY`` (at least 50 random characters) and
``DJANGO_ALLOWED_HOSTS``; set ``DATABASE_URL`` and ``REDIS_URL`` for a real
deployment. Assumes TLS terminates at (or before) daphne; behind a proxy that
terminates TLS set ``DJANGO_SECURE_PROXY_SSL_HEADER=1`` so X-Forwarded-Proto is honoured.

Static files (htmx, its WebSocket extension, the console's CSS and scripts) are served by
WhiteNoise from ``STATIC_ROOT`` (``DJANGO_STATIC_ROOT``, default ``BASE_DIR/staticfiles``):
run ``manage.py collectstatic --noinput`` with these settings before starting daphne.
Daphne serves no static files itself, and ``DEBUG`` off turns Django's own serving off.
"""

import os

from django.core.exceptions import ImproperlyConfigured

from console.env import env_bool
from console.settings import *  # noqa: F403
from console.settings import DEVELOPMENT_SECRET_KEY, MIDDLEWARE, SECRET_KEY

DEBUG = False

# The base module falls back to the public development key when DJANGO_DEBUG is
# on or unset; production never accepts it.
if not SECRET_KEY or SECRET_KEY == DEVELOPMENT_SECRET_KEY:
    raise ImproperlyConfigured("console.settings_production requires DJANGO_SECRET_KEY")

# Only the hosts the operator names are served; unset means loopback only (a
# deployment behind a reverse proxy on the same machine). Set DJANGO_ALLOWED_HOSTS
# to the public host name(s) of a real deployment.
ALLOWED_HOSTS = [
    h.strip() for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "").split(",") if h.strip()
] or ["localhost", "127.0.0.1", "[::1]"]

# WhiteNoise right after SecurityMiddleware (as its documentation asks); it works in
# Django's ASGI handler, so daphne serves /static/ through it.
MIDDLEWARE = [*MIDDLEWARE]
MIDDLEWARE.insert(MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
                  "whitenoise.middleware.WhiteNoiseMiddleware")
# Hashed, compressed copies made by collectstatic: cached for ever by browsers.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

SECURE_SSL_REDIRECT = True
SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_SECURE_HSTS_SECONDS", str(60 * 60 * 24 * 365)))
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_SECURE = True
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_SECURE = True
X_FRAME_OPTIONS = "DENY"

if env_bool(
    os.environ.get("DJANGO_SECURE_PROXY_SSL_HEADER"),
    name="DJANGO_SECURE_PROXY_SSL_HEADER",
    default=False,
):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
