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
