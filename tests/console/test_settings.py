"""console.env: DATABASE_URL / REDIS_URL / boolean parsing."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from console.env import (
    SQLITE_OPTIONS,
    EnvError,
    env_bool,
    parse_database_url,
    parse_redis_url,
    task_settings,
)

BASE = Path("/srv/draplanner")
REPO_ROOT = Path(__file__).resolve().parents[2]


class TestDatabaseUrl:
    def test_unset_means_sqlite_in_base_dir(self):
        for value in (None, "", "   "):
            assert parse_database_url(value, base_dir=BASE) == {
                "ENGINE": "django.db.backends.sqlite3",
                "NAME": BASE / "db.sqlite3",
                "OPTIONS": SQLITE_OPTIONS,
            }

    def test_sqlite_writes_wait_for_each_other(self):
        """Writes take the lock at BEGIN and wait for it; WAL lets readers run alongside."""
        for url in (None, "sqlite:///data/dev.sqlite3", "sqlite:///:memory:"):
            options = parse_database_url(url, base_dir=BASE)["OPTIONS"]
            assert options["transaction_mode"] == "IMMEDIATE"
            assert options["timeout"] >= 20
            assert "journal_mode=WAL" in options["init_command"]

    def test_postgres_url(self):
        db = parse_database_url(
            "postgres://planner:s3cret@db.example.com:6543/draplanner", base_dir=BASE
        )
        assert db == {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": "draplanner",
            "USER": "planner",
            "PASSWORD": "s3cret",
            "HOST": "db.example.com",
            "PORT": "6543",
            "OPTIONS": {},
        }

    def test_postgresql_scheme_default_port_and_options(self):
        db = parse_database_url("postgresql://u@localhost/app?sslmode=require", base_dir=BASE)
        assert db["ENGINE"] == "django.db.backends.postgresql"
        assert (db["HOST"], db["PORT"], db["USER"], db["PASSWORD"]) == ("localhost", "", "u", "")
        assert db["OPTIONS"] == {"sslmode": "require"}

    def test_percent_encoded_credentials_are_decoded(self):
        db = parse_database_url("postgres://us%40er:p%3Ass%2Fw@h:5432/my%20db", base_dir=BASE)
        assert (db["USER"], db["PASSWORD"], db["NAME"]) == ("us@er", "p:ss/w", "my db")

    def test_sqlite_urls(self):
        relative = parse_database_url("sqlite:///data/dev.sqlite3", base_dir=BASE)
        assert relative["NAME"] == BASE / "data/dev.sqlite3"
        absolute = parse_database_url("sqlite:////tmp/x.sqlite3", base_dir=BASE)
        assert absolute["NAME"] == Path("/tmp/x.sqlite3")
        memory = parse_database_url("sqlite:///:memory:", base_dir=BASE)
        assert memory["NAME"] == ":memory:"

    @pytest.mark.parametrize(
        ("url", "fragment"),
        [
            ("mysql://u:p@h/db", "unsupported scheme 'mysql'"),
            ("db.example.com/draplanner", "unsupported scheme '(none)'"),
            ("postgres://u:p@h:notaport/db", "is not a valid URL"),
            ("postgres://u:p@h:5432", "database name"),
            ("postgres://u:p@h:5432/a/b", "database name"),
            ("postgres:///db", "names no host"),
            ("sqlite://host/x.sqlite3", "has no host"),
            ("sqlite://", "names no file"),
        ],
    )
    def test_bad_urls_raise_clear_errors(self, url, fragment):
        with pytest.raises(EnvError) as info:
            parse_database_url(url, base_dir=BASE)
        message = str(info.value)
        assert message.startswith("DATABASE_URL=")
        assert fragment in message

    def test_error_is_improperly_configured_and_masks_password(self):
        with pytest.raises(ImproperlyConfigured) as info:
            parse_database_url("mysql://u:hunter2@h/db", base_dir=BASE)
        assert "hunter2" not in str(info.value)
        assert "u:***@h" in str(info.value)


class TestRedisUrl:
    def test_unset_means_in_memory_layer(self):
        for value in (None, ""):
            assert parse_redis_url(value) == {
                "BACKEND": "console.channel_layer.LoopSafeChannelLayer"}

    @pytest.mark.parametrize(
        "url",
        [
            "redis://localhost:6379/0",
            "redis://:pw@redis.internal:6380/2",
            "rediss://cache.example.com",
            "unix:///run/redis/redis.sock",
        ],
    )
    def test_redis_url_selects_channels_redis(self, url):
        assert parse_redis_url(url) == {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [url]},
        }

    @pytest.mark.parametrize(
        ("url", "fragment"),
        [
            ("http://localhost:6379", "unsupported scheme 'http'"),
            ("localhost:6379", "unsupported scheme"),
            ("redis://localhost:six/0", "is not a valid URL"),
            ("redis:///0", "names no host"),
            ("redis://localhost:6379/zero", "must be a number"),
            ("unix://", "socket path"),
        ],
    )
    def test_bad_urls_raise_clear_errors(self, url, fragment):
        with pytest.raises(EnvError) as info:
            parse_redis_url(url)
        assert str(info.value).startswith("REDIS_URL=")
        assert fragment in str(info.value)


class TestTaskSettings:
    def test_without_redis_the_queue_is_in_the_database(self):
        for backend in (None, "", "database", " Database "):
            assert task_settings(backend, None) == {
                "TASKS": {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}},
                "INSTALLED_APPS": ["django_tasks", "django_tasks_db"], "RQ_QUEUES": {},
                "RQ": {}}

    def test_redis_url_chooses_the_redis_backend(self):
        chosen = task_settings(None, "redis://cache:6379/1")
        assert chosen["TASKS"] == {"default": {"BACKEND": "django_tasks_rq.RQBackend"}}
        assert chosen["INSTALLED_APPS"] == ["django_tasks", "django_tasks_db", "django_rq"]
        assert chosen["RQ_QUEUES"] == {"default": {"URL": "redis://cache:6379/1"}}
        assert chosen["RQ"] == {"JOB_CLASS": "django_tasks_rq.Job"}  # for plain rqworker

    def test_the_database_queue_may_be_kept_with_redis(self):
        chosen = task_settings("database", "redis://cache:6379/1")
        assert chosen["TASKS"]["default"]["BACKEND"] == "django_tasks_db.DatabaseBackend"

    @pytest.mark.parametrize(("backend", "url", "message"), [
        ("celery", None, "expected one of database, redis"),
        ("redis", None, "needs REDIS_URL"),
        ("redis", "http://cache", "unsupported scheme"),
    ])
    def test_bad_values_name_the_variable(self, backend, url, message):
        with pytest.raises(EnvError, match=message):
            task_settings(backend, url)


class TestEnvBool:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [("1", True), ("true", True), ("Yes", True), ("on", True),
         ("0", False), ("false", False), ("no", False), ("", False)],
    )
    def test_values(self, value, expected):
        assert env_bool(value, name="X", default=not expected) is expected

    def test_unset_uses_default(self):
        assert env_bool(None, name="X", default=True) is True
        assert env_bool(None, name="X", default=False) is False

    def test_garbage_is_an_error(self):
        with pytest.raises(EnvError, match="DJANGO_DEBUG='maybe' is not a boolean"):
            env_bool("maybe", name="DJANGO_DEBUG", default=True)


def test_active_settings_use_the_parsers(settings):
    """The settings module wires the parsers in (tests run without the env vars)."""
    assert settings.DATABASES["default"]["ENGINE"] in {
        "django.db.backends.sqlite3",
        "django.db.backends.postgresql",
    }
    assert settings.CHANNEL_LAYERS["default"]["BACKEND"] in {
        "console.channel_layer.LoopSafeChannelLayer",
        "channels_redis.core.RedisChannelLayer",
    }
    assert settings.INSTALLED_APPS[0] == "daphne"
    expected = task_settings(os.environ.get("DRA_TASKS_BACKEND"), os.environ.get("REDIS_URL"))
    assert expected["TASKS"] == settings.TASKS
    assert set(expected["INSTALLED_APPS"]) <= set(settings.INSTALLED_APPS)
    assert settings.ASGI_APPLICATION == "console.asgi.application"


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    environ.update(env)
    return subprocess.run(
        [sys.executable, str(REPO_ROOT / "manage.py"), *args],
        cwd=REPO_ROOT, env=environ, capture_output=True, text=True, timeout=120,
    )


def test_production_settings_pass_the_deploy_check():
    secret = secrets.token_urlsafe(48)  # 64 characters
    result = _manage(
        "check", "--deploy", "--fail-level", "WARNING",
        DJANGO_SETTINGS_MODULE="console.settings_production", DJANGO_SECRET_KEY=secret,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_settings_require_a_secret_key():
    result = _manage("check", DJANGO_SETTINGS_MODULE="console.settings_production")
    assert result.returncode != 0
    assert "requires DJANGO_SECRET_KEY" in result.stderr


def test_debug_off_requires_a_secret_key():
    result = _manage("check", DJANGO_SETTINGS_MODULE="console.settings", DJANGO_DEBUG="0")
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


def test_template_partials_are_enabled_without_load():
    from django.template import engines

    engine = engines["django"]
    source = "{% partialdef greeting inline %}hi {{ who }}{% endpartialdef %}!"
    template = engine.from_string(source)
    assert template.render({"who": "dra"}) == "hi dra!"
    loaders = engine.engine.template_loaders
    assert type(loaders[0]).__module__ == "template_partials.loader"


def test_the_upload_limit_comes_from_the_environment():
    show = ("from django.conf import settings; "
            "print(settings.DRA_MAX_UPLOAD_BYTES, settings.DATA_UPLOAD_MAX_MEMORY_SIZE)")
    result = _manage("shell", "-c", show, DRA_MAX_UPLOAD_BYTES="1000")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].split() == ["1000", "1000"]
    result = _manage("check", DRA_MAX_UPLOAD_BYTES="32MB")
    assert result.returncode != 0
    assert "DRA_MAX_UPLOAD_BYTES='32MB' is not a positive number of bytes" in result.stderr
