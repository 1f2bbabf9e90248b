"""Types shared by the views."""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

__all__ = ["HtmxHttpRequest"]


class HtmxHttpRequest(HttpRequest):
    """A request that went through django-htmx's middleware (django-htmx's documented idiom:
    the package itself ships no such type)."""

    htmx: HtmxDetails
