"""An in-process ASGI server (daphne) for browser tests that need WebSockets.

pytest-django's ``live_server`` speaks WSGI only, so live pages could not open their
sockets. :func:`start` runs daphne in a thread of the test process: it shares the test
database (pytest-django's in-memory SQLite is a shared-cache database every connection of
the process sees) and the in-memory channel layer. Twisted's reactor runs once per process,
so one server serves the whole session.

:class:`CrossThreadLayer` is the in-memory channel layer, except that a send from another
thread (a service called by the test, the worker's thread) is handed to the server's event
loop, where the consumers wait; the stock in-memory layer is only safe within one loop.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from dataclasses import dataclass

from channels.layers import InMemoryChannelLayer

__all__ = ["AsgiServer", "CrossThreadLayer", "start", "in_thread", "share_database"]


class CrossThreadLayer(InMemoryChannelLayer):
    """In-memory layer whose sends from any thread or loop land on the server's loop."""

    server_loop: asyncio.AbstractEventLoop | None = None

    def _foreign(self) -> bool:
        loop = CrossThreadLayer.server_loop
        return loop is not None and asyncio.get_running_loop() is not loop

    async def send(self, channel, message):
        if self._foreign():
            future = asyncio.run_coroutine_threadsafe(super().send(channel, message),
                                                      CrossThreadLayer.server_loop)
            return await asyncio.wrap_future(future)
        return await super().send(channel, message)

    async def group_send(self, group, message):
        if self._foreign():
            future = asyncio.run_coroutine_threadsafe(super().group_send(group, message),
                                                      CrossThreadLayer.server_loop)
            return await asyncio.wrap_future(future)
        return await super().group_send(group, message)


@dataclass
class AsgiServer:
    url: str
    thread: threading.Thread

    def stop(self) -> None:
        from twisted.internet import reactor

        if reactor.running:
            reactor.callFromThread(reactor.stop)
        self.thread.join(10)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _application():
    """The console's ASGI application, with static files served as ``runserver`` does."""
    from channels.routing import ProtocolTypeRouter
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    from console.asgi import application, django_asgi_app

    return ProtocolTypeRouter({
        "http": ASGIStaticFilesHandler(django_asgi_app),
        "websocket": application.application_mapping["websocket"],
    })


def _read_uncommitted(sender=None, connection=None, **kwargs) -> None:
    """Let readers of the shared in-memory SQLite database skip table locks.

    In shared-cache mode SQLite locks per table and never waits: a page rendering in the
    server thread while the test's worker pass writes fails with "database table is locked"
    (and so does the flush between tests). ``read_uncommitted`` makes readers take no table
    locks; writers are still serialised, and the tests write from one thread at a time.
    """
    if connection.vendor == "sqlite" and "mode=memory" in str(
            connection.settings_dict.get("NAME")):
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA read_uncommitted = 1")


def share_database() -> None:
    """Apply :func:`_read_uncommitted` to every connection of the process from now on."""
    from django.db import connection
    from django.db.backends.signals import connection_created

    connection_created.connect(_read_uncommitted, dispatch_uid="browser-read-uncommitted")
    if connection.connection is not None:  # this thread's connection exists already
        _read_uncommitted(connection=connection)


def start(timeout: float = 15.0) -> AsgiServer:
    """Start daphne on a free local port in a daemon thread; returns once it accepts."""
    from daphne.endpoints import build_endpoint_description_strings
    from daphne.server import Server, twisted_loop

    share_database()
    port = _free_port()
    server = Server(application=_application(),
                    endpoints=build_endpoint_description_strings(host="127.0.0.1", port=port),
                    signal_handlers=False, verbosity=0)
    CrossThreadLayer.server_loop = twisted_loop
    thread = threading.Thread(target=server.run, name="daphne-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"daphne did not start on port {port}") from None
            time.sleep(0.05)
    return AsgiServer(f"http://127.0.0.1:{port}", thread)


def in_thread(func, *args, **kwargs):
    """Run ``func`` in a fresh thread and return its result.

    Playwright's sync API keeps an event loop running in the test's thread, where Django's
    async_to_sync (the services' broadcast) refuses to run. A write that meets a table lock
    of the shared in-memory database (the server thread rendering a page at that moment;
    SQLite's shared cache never waits) is tried again: services write in one transaction,
    so a refused attempt left nothing behind.
    """
    from django.db import OperationalError

    for _attempt in range(50):
        try:
            return _in_thread_once(func, *args, **kwargs)
        except OperationalError as exc:
            if "locked" not in str(exc):
                raise
            time.sleep(0.1)
    return _in_thread_once(func, *args, **kwargs)


def _in_thread_once(func, *args, **kwargs):
    outcome: dict = {}

    def target() -> None:
        from django.db import connection

        try:
            outcome["value"] = func(*args, **kwargs)
        except BaseException as exc:  # re-raised in the caller
            outcome["error"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")
