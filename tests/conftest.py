"""Shared pytest configuration. pytest-django reads DJANGO_SETTINGS_MODULE from pyproject.toml.

Browser fixtures (``browser``, ``page``) live in tests/browser/conftest.py.
"""

import pytest


@pytest.hookimpl(trylast=True)  # after pytest-django's own reordering
def pytest_collection_modifyitems(config, items):
    """Run browser tests last (otherwise in collection order).

    Playwright's sync API leaves its asyncio loop registered as the running loop
    of the main thread while the session-wide browser is open, so any
    pytest-asyncio test after the first browser test would fail with "cannot be
    called from a running event loop".
    """
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)


_exit_status = {"code": 0}


def pytest_sessionfinish(session, exitstatus):
    _exit_status["code"] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """End the process once pytest is done, without the interpreter's own teardown.

    The browser tests leave daemon threads behind (the in-process daphne server and its
    Twisted reactor, Playwright's driver) next to native libraries (CEL, SQLite's shared
    in-memory database). Tearing the interpreter down under them crashed the process once
    in CI (a segmentation fault after "N passed"), turning a green run red. Everything
    worth doing has been done by now: reports are written, the test databases are gone.
    """
    import os
    import sys

    writer = getattr(config.pluginmanager.get_plugin("terminalreporter"), "_tw", None)
    if writer is not None:
        writer.flush()  # the "N passed" summary must reach the log
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            stream.flush()
    os._exit(_exit_status["code"])
