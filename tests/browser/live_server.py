"""An in-process ASGI server (daphne) for browser tests that need WebSockets.

pytest-django's ``live_server`` speaks WSGI only, so live pages could not open their
sockets. :func:`start` runs daphne in a thread of the test process: it shares the test
database (a file-backed SQLite database in WAL mode, ``tests/conftest.py``: every
connection of the process sees what others committed, never what they have not) and the
console's default channel layer (``console.channel_layer.LoopSafeChannelLayer``, safe for
sends from the test's and the worker's threads). Twisted's reactor runs once per process,
so one server serves the whole session; :meth:`AsgiServer.stop` ends it cleanly.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from dataclasses import dataclass

__all__ = ["AsgiServer", "start", "in_thread"]

IN_THREAD_TIMEOUT = 120.0  # a generous bound on a hang, not a timing


@dataclass
class AsgiServer:
    url: str
    thread: threading.Thread

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the reactor and wait for the server thread to finish its loop.

        Raises:
            RuntimeError: the thread is still alive after ``timeout`` seconds.
        """
        from twisted.internet import reactor

        if reactor.running:
            reactor.callFromThread(reactor.stop)
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise RuntimeError(f"daphne's thread did not stop within {timeout} s")


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


def start(timeout: float = 15.0) -> AsgiServer:
    """Start daphne on a free local port in a daemon thread; returns once it accepts."""
    from daphne.endpoints import build_endpoint_description_strings
    from daphne.server import Server, twisted_loop

    port = _free_port()
    server = Server(application=_application(),
                    endpoints=build_endpoint_description_strings(host="127.0.0.1", port=port),
                    signal_handlers=False, verbosity=0)
    thread = threading.Thread(target=_serve, args=(server, twisted_loop), name="daphne-test",
                              daemon=True)
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


def _serve(server, loop: asyncio.AbstractEventLoop) -> None:
    """Run daphne until its reactor stops, then finish everything left on its loop.

    Once the reactor has stopped, tasks still pending on the loop (application instances,
    consumers awaiting their channel) are cancelled and awaited, the default executor (the
    threads of ``sync_to_async``) is shut down and the loop closed: nothing is left for the
    interpreter's teardown to finalize.
    """
    try:
        server.run()
    finally:
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


def in_thread(func, *args, **kwargs):
    """Run ``func`` in a fresh thread and return its result.

    Playwright's sync API keeps an event loop running in the test's thread, where Django's
    async_to_sync (the services' broadcast) refuses to run.

    Raises:
        RuntimeError: ``func`` did not return within ``IN_THREAD_TIMEOUT`` seconds.
    """
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
    thread.join(IN_THREAD_TIMEOUT)
    if thread.is_alive():
        raise RuntimeError(f"{func!r} did not return within {IN_THREAD_TIMEOUT} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")
