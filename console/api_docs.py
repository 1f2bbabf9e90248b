"""Swagger UI and Redoc over the OpenAPI schema, with nothing fetched from elsewhere.

drf-spectacular-sidecar ships both front ends as static files (``SWAGGER_UI_DIST`` and
``REDOC_DIST`` = ``"SIDECAR"``). What is left of the outside world is removed here: Redoc's
page template links Google Fonts (``templates/api/redoc.html`` drops them) and Redoc's
sidebar draws a logo from cdn.redoc.ly, so both pages carry a Content-Security-Policy that
allows this origin only; the blocked logo is simply not shown.

The schema itself (``/api/schema/``, :class:`SchemaView`) is YAML as
``application/vnd.oai.openapi``, which a browser does not show but downloads: a browser's
navigation (``Accept`` starting with ``text/html``) gets the same YAML as ``text/plain``, shown
in the tab. Scripts and the two pages get what they ask for, as before.
"""

from __future__ import annotations

from drf_spectacular.renderers import OpenApiYamlRenderer
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerView,
)

__all__ = ["CONTENT_SECURITY_POLICY", "SchemaView", "SwaggerView", "RedocView"]

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; font-src 'self' data:; "
    "style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; "
    "worker-src 'self' blob:; connect-src 'self'"
)


class _LocalOnly:
    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        return response


class SwaggerView(_LocalOnly, SpectacularSwaggerView):
    """Swagger UI at ``/api/docs/``."""


class RedocView(_LocalOnly, SpectacularRedocView):
    """Redoc at ``/api/redoc/``."""

    template_name = "api/redoc.html"


class _YamlAsText(OpenApiYamlRenderer):
    media_type = "text/plain"
    charset = "utf-8"


class SchemaView(SpectacularAPIView):
    """The OpenAPI schema at ``/api/schema/``; shown, not downloaded, when a browser opens it."""

    def perform_content_negotiation(self, request, force=False):
        if (request.META.get("HTTP_ACCEPT", "").startswith("text/html")
                and "format" not in request.query_params):
            return _YamlAsText(), _YamlAsText.media_type
        return super().perform_content_negotiation(request, force)
