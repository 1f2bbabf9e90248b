"""The request size limit: one setting, checked before a body is read.

``settings.DRA_MAX_UPLOAD_BYTES`` (env ``DRA_MAX_UPLOAD_BYTES``, default 32 MiB) is the most
one request may carry: every uploaded file and the pasted text together, or one API body.
It is enforced in three places, all with :func:`too_large_message`:

* :class:`BodyLimitASGI` (``console.asgi``): the server never hands Django more than the
  limit. A body that declares a larger ``Content-Length`` is not read at all; a body without
  one (chunked) is cut at the limit and the request marked (:data:`SCOPE_KEY`).
* :class:`RequestSizeMiddleware`: before any view (and before the CSRF check parses a form),
  a request over the limit is answered 413: JSON ``{"detail": ...}`` for the REST API, the
  view's own ``too_large(request, message)`` page where it has one (the upload form shows
  the message as a form error), plain text otherwise.
* :func:`read_bounded`: what an API parser reads (a body without ``Content-Length`` under
  WSGI), at most the limit.

Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is set to the same limit (form fields and
``request.body``); uploaded files beyond ``FILE_UPLOAD_MAX_MEMORY_SIZE`` go to a temporary
file, not to memory. See docs/console.md, "Limits".
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse, JsonResponse

__all__ = ["SCOPE_KEY", "DEFAULT_MAX_UPLOAD_BYTES", "max_upload_bytes", "too_large_message",
           "declared_size", "read_bounded", "RequestTooLarge", "RequestSizeMiddleware",
           "BodyLimitASGI"]

DEFAULT_MAX_UPLOAD_BYTES = 32 * 1024 * 1024

_DRAIN_LIMITS = 4
"""How many limits' worth of an oversized body are read and dropped before giving up."""

SCOPE_KEY = "draplanner.body_too_large"
"""ASGI scope key set by :class:`BodyLimitASGI` when it cut a body: the bytes it received."""


def max_upload_bytes() -> int:
    return int(getattr(settings, "DRA_MAX_UPLOAD_BYTES", DEFAULT_MAX_UPLOAD_BYTES))


def _size(count: int) -> str:
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):.1f} MiB".replace(".0 MiB", " MiB")
    if count >= 1024:
        return f"{count / 1024:.1f} KiB".replace(".0 KiB", " KiB")
    return f"{count} bytes"


def too_large_message(count: int | None) -> str:
    """One line naming the limit (and the setting that raises it)."""
    limit = max_upload_bytes()
    got = f"{_size(count)}" if count else "larger than the limit"
    return (f"request body: {got}; the limit is {_size(limit)} per request "
            "(DRA_MAX_UPLOAD_BYTES)")


class RequestTooLarge(Exception):
    """A body over the limit; ``str()`` is :func:`too_large_message`."""

    def __init__(self, count: int | None) -> None:
        self.count = count
        super().__init__(too_large_message(count))


def declared_size(request) -> int | None:
    """The size a request says it has (``Content-Length``, or what the server cut), if any."""
    scope = getattr(request, "scope", None) or {}
    if scope.get(SCOPE_KEY):
        return int(scope[SCOPE_KEY])
    try:
        return int(request.META.get("CONTENT_LENGTH") or "")
    except ValueError:
        return None


def read_bounded(stream) -> bytes:
    """All of ``stream``, or :class:`RequestTooLarge` once it passes the limit."""
    if stream is None:
        return b""
    limit = max_upload_bytes()
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise RequestTooLarge(None)
    return data


def _is_api_view(view_func) -> bool:
    from rest_framework.views import APIView

    cls = getattr(view_func, "cls", None)
    return isinstance(cls, type) and issubclass(cls, APIView)


class RequestSizeMiddleware:
    """Answer 413 before a view (or the CSRF check) reads a body over the limit.

    Must come before ``CsrfViewMiddleware``: its ``process_view`` parses POSTed forms.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        size = declared_size(request)
        if size is None or size <= max_upload_bytes():
            return None
        message = too_large_message(size)
        if _is_api_view(view_func):
            return JsonResponse({"detail": message}, status=413)
        handler = getattr(view_func, "too_large", None)
        if handler is not None:
            return handler(request, message)
        return HttpResponse(message + "\n", status=413, content_type="text/plain")


class BodyLimitASGI:
    """ASGI wrapper: never pass the application more than the limit of a request body."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = max_upload_bytes()
        declared = None
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = None
        seen = 0
        done = False

        async def drain() -> None:
            # Read (and drop) what the client still sends, so that it reads the 413 instead
            # of a reset connection; an endless body is cut off after a few limits' worth.
            nonlocal seen
            message = {"more_body": True}
            while message.get("more_body", False) and seen <= _DRAIN_LIMITS * limit:
                message = await receive()
                if message["type"] != "http.request":
                    return
                seen += len(message.get("body", b""))

        async def bounded_receive():
            nonlocal seen, done
            if done:
                return await receive()  # after the body: http.disconnect
            if declared is not None and declared > limit:
                done = True  # nothing reaches the application; the middleware answers 413
                await drain()
                return {"type": "http.request", "body": b"", "more_body": False}
            message = await receive()
            if message["type"] != "http.request":
                return message
            seen += len(message.get("body", b""))
            if seen > limit:
                scope[SCOPE_KEY] = seen
                done = True
                if message.get("more_body", False):
                    await drain()
                return {"type": "http.request", "body": b"", "more_body": False}
            if not message.get("more_body", False):
                done = True
            return message

        return await self.app(scope, bounded_receive, send)
