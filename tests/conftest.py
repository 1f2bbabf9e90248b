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


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix,
                                 tmp_path_factory):
    """Test on a SQLite file, not Django's default shared in-memory database.

    Threads of the test process (the in-process daphne of the browser tests, the worker, the
    services a test calls in another thread) each have their own connection. On a file in WAL
    mode with a busy timeout (``console.env.SQLITE_OPTIONS``) readers never wait for the
    writer and see only what was committed, and writers wait their turn, as in production.
    """
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        path = tmp_path_factory.mktemp("database") / "test.sqlite3"
        database.setdefault("TEST", {})["NAME"] = str(path)


DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


@pytest.fixture
def database_tasks(settings):
    """Queue tasks in the database (django-tasks-db), whatever ``REDIS_URL`` chose."""
    settings.TASKS = DATABASE_TASKS
    return settings.TASKS


def queued(path: str, status: str = "READY") -> list:
    """The database queue's tasks of ``path`` (``module.function``) in ``status``."""
    from django_tasks_db.models import DBTaskResult

    return list(DBTaskResult.objects.filter(task_path=path, status=status))
