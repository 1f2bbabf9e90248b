"""console.limits: the request size limit, in the ASGI server wrapper and its messages."""

import asyncio

import pytest

from console.limits import SCOPE_KEY, BodyLimitASGI, too_large_message


def test_the_message_names_the_limit_and_the_setting(settings):
    settings.DRA_MAX_UPLOAD_BYTES = 32 * 1024 * 1024
    assert too_large_message(90 * 1024 * 1024) == (
        "request body: 90 MiB; the limit is 32 MiB per request (DRA_MAX_UPLOAD_BYTES)")
    assert too_large_message(None) == (
        "request body: larger than the limit; the limit is 32 MiB per request "
        "(DRA_MAX_UPLOAD_BYTES)")


def test_the_default_limit_is_32_mib():
    from django.conf import settings

    assert settings.DRA_MAX_UPLOAD_BYTES == 32 * 1024 * 1024
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == settings.DRA_MAX_UPLOAD_BYTES
    assert settings.FILE_UPLOAD_MAX_MEMORY_SIZE < settings.DRA_MAX_UPLOAD_BYTES


def _run(chunks: list[bytes], headers=()):
    """Drive BodyLimitASGI with a client sending ``chunks``; what the app got, and what
    the client still had to send."""
    pending = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
               for i, c in enumerate(chunks)]
    got: list[dict] = []
    scope = {"type": "http", "headers": list(headers)}

    async def receive():
        return pending.pop(0) if pending else {"type": "http.disconnect"}

    async def app(scope, receive, send):
        while True:
            message = await receive()
            got.append(message)
            if not message.get("more_body"):
                return

    asyncio.run(BodyLimitASGI(app)(scope, receive, None))
    return b"".join(m["body"] for m in got), scope, pending


def test_a_body_within_the_limit_passes_untouched(settings):
    settings.DRA_MAX_UPLOAD_BYTES = 10
    body, scope, pending = _run([b"01234", b"56789"], [(b"content-length", b"10")])
    assert (body, SCOPE_KEY in scope, pending) == (b"0123456789", False, [])


def test_a_declared_length_over_the_limit_reaches_the_app_as_an_empty_body(settings):
    settings.DRA_MAX_UPLOAD_BYTES = 10
    body, scope, pending = _run([b"01234", b"56789", b"x"], [(b"content-length", b"11")])
    assert body == b""
    assert pending == []  # drained, so the client reads the 413 instead of a reset


def test_a_body_without_length_is_cut_at_the_limit_and_marked(settings):
    settings.DRA_MAX_UPLOAD_BYTES = 10
    body, scope, pending = _run([b"01234", b"56789", b"x", b"y"])
    assert body == b"0123456789"  # the chunks before the one that crossed the limit
    assert scope[SCOPE_KEY] == 11 and pending == []  # the bytes seen when it was cut


def test_an_endless_body_is_not_read_for_ever(settings):
    settings.DRA_MAX_UPLOAD_BYTES = 10
    _body, _scope, pending = _run([b"0123456789"] * 100, [(b"content-length", b"1000")])
    assert 0 < len(pending) < 100


@pytest.mark.django_db
def test_the_server_application_refuses_a_large_body_before_django_reads_it(settings):
    """console.asgi end to end: 413 and the message, the client's body never parsed."""
    from asgiref.testing import ApplicationCommunicator

    from console.asgi import application

    settings.DRA_MAX_UPLOAD_BYTES = 1024
    scope = {"type": "http", "method": "POST", "path": "/api/pods/", "raw_path": b"/api/pods/",
             "query_string": b"", "root_path": "", "scheme": "http", "http_version": "1.1",
             "server": ("testserver", 80), "client": ("127.0.0.1", 5000),
             "headers": [(b"host", b"testserver"), (b"content-type", b"application/yaml"),
                         (b"content-length", b"4096")]}

    async def exchange():
        communicator = ApplicationCommunicator(application, scope)
        for i in range(4):
            await communicator.send_input({"type": "http.request", "body": b"x" * 1024,
                                           "more_body": i < 3})
        start = await communicator.receive_output(10)
        body = await communicator.receive_output(10)
        return start, body

    start, body = asyncio.run(exchange())
    assert start["status"] == 413
    assert b"the limit is 1 KiB per request (DRA_MAX_UPLOAD_BYTES)" in body["body"]
