"""Read deployment settings from environment variables.

Small, dependency-free parsers for ``DATABASE_URL``, ``REDIS_URL`` and boolean
flags. Every malformed value raises :class:`EnvError` (an
``ImproperlyConfigured``) naming the variable and what was expected, so a typo
fails at start-up instead of at the first query.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

POSTGRES_SCHEMES = frozenset({"postgres", "postgresql", "pgsql"})
SQLITE_SCHEMES = frozenset({"sqlite"})
REDIS_SCHEMES = frozenset({"redis", "rediss", "unix"})

SQLITE_BUSY_TIMEOUT_SECONDS = 20
"""How long a SQLite connection waits for another one's write lock before failing."""

SQLITE_OPTIONS = {
    # Writes wait their turn instead of failing with "database is locked": every
    # transaction takes the write lock when it begins (BEGIN IMMEDIATE), so a transaction
    # that read first never has to upgrade its lock (an upgrade that meets another writer
    # fails at once, whatever the timeout), and a busy database is waited for.
    "transaction_mode": "IMMEDIATE",
    "timeout": SQLITE_BUSY_TIMEOUT_SECONDS,
    # WAL: readers never block the writer nor wait for it. NORMAL is safe with WAL (a
    # power cut may lose the last commits, never corrupt the file).
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
}
"""``OPTIONS`` of every SQLite database (docs/console.md, "Settings")."""

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


class EnvError(ImproperlyConfigured):
    """An environment variable holds a value the console cannot use."""


def _describe(url: str) -> str:
    """The URL with any password masked, for error messages."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


def _split(url: str, name: str) -> SplitResult:
    """``urlsplit`` that also validates the port, raising :class:`EnvError`."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - accessing .port validates it (raises ValueError)
    except ValueError as exc:
        raise EnvError(f"{name}={_describe(url)!r} is not a valid URL: {exc}") from None
    return parts


def env_bool(value: str | None, *, name: str, default: bool) -> bool:
    """Interpret a boolean flag such as ``DJANGO_DEBUG``."""
    if value is None:
        return default
    normalised = value.strip().lower()
    if normalised in _TRUE:
        return True
    if normalised in _FALSE:
        return False
    raise EnvError(f"{name}={value!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off")


def parse_database_url(
    url: str | None, *, base_dir: Path, name: str = "DATABASE_URL"
) -> dict[str, Any]:
    """Turn ``DATABASE_URL`` into one entry of Django's ``DATABASES``.

    * unset or empty -> SQLite at ``base_dir / "db.sqlite3"``; every SQLite database gets
      :data:`SQLITE_OPTIONS` (writes wait for each other, WAL)
    * ``sqlite:///relative/path.sqlite3`` (relative to ``base_dir``),
      ``sqlite:////absolute/path.sqlite3`` or ``sqlite:///:memory:``
    * ``postgres://user:pass@host:port/dbname?sslmode=require`` (also
      ``postgresql://``) -> PostgreSQL through psycopg; query parameters become
      ``OPTIONS``. User, password and database name are percent-decoded.
    """
    if url is None or not url.strip():
        return _sqlite(base_dir / "db.sqlite3")
    url = url.strip()
    parts = _split(url, name)
    scheme = parts.scheme.lower()

    if scheme in SQLITE_SCHEMES:
        if parts.netloc:
            raise EnvError(
                f"{name}={url!r}: a SQLite URL has no host; "
                "use sqlite:///relative/path or sqlite:////absolute/path"
            )
        raw = unquote(parts.path)
        path = raw[1:] if raw.startswith("/") else raw
        if not path:
            raise EnvError(f"{name}={url!r}: the SQLite URL names no file")
        if path == ":memory:":
            db_name: Any = ":memory:"
        else:
            candidate = Path(path)
            db_name = candidate if candidate.is_absolute() else base_dir / candidate
        return _sqlite(db_name)

    if scheme in POSTGRES_SCHEMES:
        db = unquote(parts.path.lstrip("/"))
        if not parts.hostname:
            raise EnvError(f"{name}={_describe(url)!r}: the PostgreSQL URL names no host")
        if not db or "/" in db:
            raise EnvError(
                f"{name}={_describe(url)!r}: expected exactly one database name after the host, "
                "as in postgres://user:pass@host:5432/dbname"
            )
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": db,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname,
            "PORT": str(parts.port) if parts.port is not None else "",
            "OPTIONS": dict(parse_qsl(parts.query)),
        }

    expected = ", ".join(f"{s}://" for s in sorted(POSTGRES_SCHEMES | SQLITE_SCHEMES))
    raise EnvError(
        f"{name}={_describe(url)!r}: unsupported scheme {parts.scheme or '(none)'!r}; "
        f"expected one of {expected}"
    )


def _sqlite(name: Any) -> dict[str, Any]:
    return {"ENGINE": "django.db.backends.sqlite3", "NAME": name, "OPTIONS": dict(SQLITE_OPTIONS)}


def parse_redis_url(url: str | None, *, name: str = "REDIS_URL") -> dict[str, Any]:
    """Turn ``REDIS_URL`` into Django Channels' ``CHANNEL_LAYERS["default"]``.

    * unset or empty -> ``console.channel_layer.LoopSafeChannelLayer`` (in memory, one
      process; safe for sends from the worker thread and other event loops)
    * ``redis://[:password@]host[:port][/db]``, ``rediss://...`` or
      ``unix:///path/to/redis.sock`` -> ``channels_redis.core.RedisChannelLayer``
    """
    if url is None or not url.strip():
        return {"BACKEND": "console.channel_layer.LoopSafeChannelLayer"}
    url = url.strip()
    parts = _split(url, name)
    scheme = parts.scheme.lower()
    if scheme not in REDIS_SCHEMES:
        expected = ", ".join(f"{s}://" for s in sorted(REDIS_SCHEMES))
        raise EnvError(
            f"{name}={_describe(url)!r}: unsupported scheme {parts.scheme or '(none)'!r}; "
            f"expected one of {expected}"
        )
    if scheme == "unix":
        if not parts.path:
            raise EnvError(f"{name}={url!r}: a unix:// Redis URL needs a socket path")
    else:
        if not parts.hostname:
            raise EnvError(f"{name}={_describe(url)!r}: the Redis URL names no host")
        db = parts.path.lstrip("/")
        if db and not db.isdigit():
            raise EnvError(
                f"{name}={_describe(url)!r}: the Redis database must be a number, got {db!r}"
            )
    return {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        # channels-redis passes URL strings straight to redis-py's from_url().
        "CONFIG": {"hosts": [url]},
    }


TASK_BACKENDS = {
    # django-tasks-db: a table of queued tasks; run by the in-process worker's thread, by
    # ``manage.py worker`` and by ``manage.py db_worker`` (docs/console.md, "Tasks")
    "database": "django_tasks_db.DatabaseBackend",
    # django-tasks-rq: RQ queues in Redis; run by ``manage.py rqworker --with-scheduler``
    "redis": "django_tasks_rq.RQBackend",
}
"""The task backends ``DRA_TASKS_BACKEND`` may name, and their Django backend classes."""


def task_settings(backend: str | None, redis_url: str | None, *,
                  name: str = "DRA_TASKS_BACKEND") -> dict[str, Any]:
    """Django's ``TASKS`` (the django-tasks backport) and what the chosen backend needs.

    ``DRA_TASKS_BACKEND`` names the backend: ``database`` (django-tasks-db, the default
    without ``REDIS_URL``) or ``redis`` (django-tasks-rq on ``REDIS_URL``, the default
    with it). Returns ``{"TASKS": ..., "INSTALLED_APPS": [...], "RQ_QUEUES": {...}, "RQ": {...}}``;
    ``RQ_QUEUES`` is empty for the database backend; ``RQ`` makes django-tasks-rq's job
    class django-rq's default, so a plain ``manage.py rqworker`` runs the tasks.
    """
    chosen = (backend or "").strip().lower() or ("redis" if (redis_url or "").strip()
                                                 else "database")
    if chosen not in TASK_BACKENDS:
        raise EnvError(f"{name}={backend!r}: expected one of {', '.join(sorted(TASK_BACKENDS))}")
    if chosen == "redis" and not (redis_url or "").strip():
        raise EnvError(f"{name}=redis needs REDIS_URL (the Redis server of its queues)")
    apps = ["django_tasks", "django_tasks_db"]
    queues: dict[str, Any] = {}
    rq: dict[str, Any] = {}
    if chosen == "redis":
        parse_redis_url(redis_url)  # the same checks as the channel layer's
        apps.append("django_rq")
        queues = {"default": {"URL": redis_url.strip()}}
        rq = {"JOB_CLASS": "django_tasks_rq.Job"}
    return {"TASKS": {"default": {"BACKEND": TASK_BACKENDS[chosen]}},
            "INSTALLED_APPS": apps, "RQ_QUEUES": queues, "RQ": rq}
