"""Django settings for the DRA Planner console (development defaults).

Environment variables:

``DJANGO_DEBUG``
    "1" (default) or "0". Development is the default; production uses
    ``console.settings_production``, which forces DEBUG off.
``DJANGO_SECRET_KEY``
    Required when DEBUG is off. With DEBUG on, a fixed and clearly insecure
    development key is used if it is unset.
``DJANGO_ALLOWED_HOSTS``
    Comma-separated host names (default: localhost names when DEBUG is on).
``DATABASE_URL``
    Unset: SQLite at ``BASE_DIR/db.sqlite3``. ``postgres://user:pass@host:port/name``:
    PostgreSQL through psycopg. See ``console.env.parse_database_url``.
``REDIS_URL``
    Unset: in-memory channel layer (one process). ``redis://host:6379/0``:
    ``channels_redis``. See ``console.env.parse_redis_url``.
``DRA_TASKS_BACKEND``
    Where background tasks queue (Django's tasks API, the django-tasks backport):
    ``database`` (default without ``REDIS_URL``; django-tasks-db) or ``redis`` (default with
    ``REDIS_URL``; django-tasks-rq). See ``console.env.task_settings`` and docs/console.md,
    "Tasks".
``DJANGO_STATIC_ROOT``
    Where ``collectstatic`` puts static files for production (default
    ``BASE_DIR/staticfiles``).
``DRA_MAX_UPLOAD_BYTES``
    The most one request may carry (all uploaded files and pasted text together, or one
    API body), in bytes; default 32 MiB (33554432). Larger requests are answered 413 with
    a message naming the limit, before their body is read. See ``console.limits``.
``DRA_WORKER_IN_PROCESS``
    "1" (default): a server process (``runserver``, daphne) also runs the baseline
    worker and the queued background tasks in threads. "0": it does not; run
    ``manage.py worker`` separately.
``DRA_WORKER_POLL_SECONDS``, ``DRA_WORKER_DEBOUNCE_SECONDS``, ``DRA_WORKER_LEASE_SECONDS``
    How often the worker looks for changes (1), how long it waits for a burst of writes
    to end (0.2), and how long its lease lasts without renewal (30).
``DRA_EVENT_TTL``
    How long a stored Event is kept after its last write: seconds (``3600``) or a duration
    (``1h``, ``90m``, ``1h30m``); default one hour, like kube-apiserver's ``--event-ttl``.
    See docs/console.md, "Events".
``DRA_KUBERNETES_VERSION``, ``DRA_FEATURE_GATES``
    The Kubernetes release whose DRA behaviour applies (1.34, 1.35 or 1.36; default the
    newest) and feature-gate overrides as kube-scheduler's ``--feature-gates``
    (``Name=true,Other=false``, ``AllAlpha=true``); as ``simulate``'s flags (docs/v1.md).
"""

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from allocation.engine.events import MAX_DURATION, parse_duration
from allocation.engine.v1 import DEFAULT_RELEASE, FeatureGateError, make_profile
from console.env import env_bool, parse_database_url, parse_redis_url, task_settings
from console.limits import DEFAULT_MAX_UPLOAD_BYTES

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool(os.environ.get("DJANGO_DEBUG"), name="DJANGO_DEBUG", default=True)

# Never used outside development: it is public, in the repository.
DEVELOPMENT_SECRET_KEY = "django-insecure-development-only-key-do-not-use-in-production"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off")
    SECRET_KEY = DEVELOPMENT_SECRET_KEY

ALLOWED_HOSTS = [
    h.strip() for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "").split(",") if h.strip()
]
if not ALLOWED_HOSTS and DEBUG:
    ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]", "testserver"]

CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
]

INSTALLED_APPS = [
    # daphne first: its runserver replaces Django's and serves ASGI (HTTP + WebSocket).
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "rest_framework",
    # API tokens (Authorization: Token <key>); created and revoked by allocation.services.accounts
    "rest_framework.authtoken",
    "drf_spectacular",
    # Swagger UI and Redoc assets served from static files, never from a CDN
    "drf_spectacular_sidecar",
    "template_partials",
    "django_htmx",
    # search and filters (FilterSets shared by pages and API), sortable paginated tables
    "django_filters",
    "django_tables2",
    "allocation",
    "scenarios",
    "clusters",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Before CsrfViewMiddleware, whose process_view parses POSTed forms.
    "console.limits.RequestSizeMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Sets request.htmx (truthy for htmx-initiated requests).
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "console.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.debug",
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            # {% partialdef %} / {% partial %} in every template without {% load partials %}.
            "builtins": ["template_partials.templatetags.partials"],
        },
    },
]
# "template_partials" (INSTALLED_APPS) wraps the loaders above so that
# "template.html#partial-name" can be rendered or included.

ASGI_APPLICATION = "console.asgi.application"

DATABASES = {"default": parse_database_url(os.environ.get("DATABASE_URL"), base_dir=BASE_DIR)}

CHANNEL_LAYERS = {"default": parse_redis_url(os.environ.get("REDIS_URL"))}

# Background tasks (scenario refresh, controller timers): Django's tasks API through the
# django-tasks backport; its queue in the database, or in Redis (docs/console.md, "Tasks").
_TASKS = task_settings(os.environ.get("DRA_TASKS_BACKEND"), os.environ.get("REDIS_URL"))
TASKS = _TASKS["TASKS"]
INSTALLED_APPS += _TASKS["INSTALLED_APPS"]
RQ_QUEUES = _TASKS["RQ_QUEUES"]
RQ = _TASKS["RQ"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "allocation:dashboard"  # signing in lands on the live cluster
LOGOUT_REDIRECT_URL = "allocation:home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Where collectstatic gathers them for production (console.settings_production, WhiteNoise).
STATIC_ROOT = Path(os.environ.get("DJANGO_STATIC_ROOT", "").strip() or BASE_DIR / "staticfiles")


def _bytes(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    try:
        count = int(value) if value else default
    except ValueError:
        count = 0
    if count <= 0:
        raise ImproperlyConfigured(f"{name}={value!r} is not a positive number of bytes")
    return count


# Request size limits (console.limits; docs/console.md, "Limits").
DRA_MAX_UPLOAD_BYTES = _bytes("DRA_MAX_UPLOAD_BYTES", DEFAULT_MAX_UPLOAD_BYTES)
# Form fields and request.body: Django refuses more (the middleware answers first).
DATA_UPLOAD_MAX_MEMORY_SIZE = DRA_MAX_UPLOAD_BYTES
# Uploaded files larger than this are written to a temporary file, not kept in memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        # Scripts: "Authorization: Token <key>", no session, no CSRF (docs/console.md, "Tokens")
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # The services' exceptions become answers in one place (400 problems, 403, 409).
    "EXCEPTION_HANDLER": "console.api.exception_handler",
    # JSON bodies within the manifest bounds (depth, numbers, duplicate keys): docs/manifests.md
    "DEFAULT_PARSER_CLASSES": [
        "allocation.api.serializers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}

SPECTACULAR_SETTINGS = {
    "TITLE": "DRA Planner API",
    "DESCRIPTION": "Kubernetes-style objects of the stored cluster, in YAML or JSON.",
    "VERSION": "v1alpha1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema, like every other page and endpoint, is for signed-in users only.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SERVE_AUTHENTICATION": ["rest_framework.authentication.SessionAuthentication",
                             "rest_framework.authentication.TokenAuthentication"],
    # Swagger UI (/api/docs/) and Redoc (/api/redoc/) from drf-spectacular-sidecar's files
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}


def _seconds(name: str, default: float) -> float:
    value = os.environ.get(name, "").strip()
    try:
        return float(value) if value else default
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number of seconds") from None


DRA_WORKER_IN_PROCESS = env_bool(
    os.environ.get("DRA_WORKER_IN_PROCESS"), name="DRA_WORKER_IN_PROCESS", default=True)
DRA_WORKER = {
    "poll": _seconds("DRA_WORKER_POLL_SECONDS", 1.0),
    "debounce": _seconds("DRA_WORKER_DEBOUNCE_SECONDS", 0.2),
    "lease_ttl": _seconds("DRA_WORKER_LEASE_SECONDS", 30.0),
}


def _ttl(name: str, default: float) -> float:
    """Seconds, from a number of seconds or a duration such as ``1h`` or ``90m``."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parse_duration(value).total_seconds()
        except ValueError as exc:
            raise ImproperlyConfigured(f"{name}={value!r}: {exc}") from None
    if not 0 < seconds <= MAX_DURATION.total_seconds():
        raise ImproperlyConfigured(f"{name}={value!r}: it must be longer than 0 seconds and "
                                   f"at most {MAX_DURATION.days}d")
    return seconds


# Stored Events are deleted this long after their last write (allocation.services.events).
DRA_EVENT_TTL = _ttl("DRA_EVENT_TTL", 3600.0)

# The Kubernetes profile (allocation.services.profile; docs/v1.md), checked at startup.
DRA_KUBERNETES_VERSION = os.environ.get("DRA_KUBERNETES_VERSION", "").strip() or DEFAULT_RELEASE
DRA_FEATURE_GATES = os.environ.get("DRA_FEATURE_GATES", "").strip()
try:
    make_profile(DRA_KUBERNETES_VERSION, DRA_FEATURE_GATES)
except FeatureGateError as exc:
    raise ImproperlyConfigured(f"DRA_KUBERNETES_VERSION={DRA_KUBERNETES_VERSION!r}, "
                               f"DRA_FEATURE_GATES={DRA_FEATURE_GATES!r}: {exc}") from None

LOG_LEVEL = os.environ.get("DJANGO_LOG_LEVEL", "INFO")
# Django's default logging (django.* to the console when DEBUG) plus the project's own loggers.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        name: {"handlers": ["console"], "level": LOG_LEVEL, "propagate": False}
        for name in ("console", "allocation", "scenarios", "bench")
    },
}
