"""console.settings: the worker's settings and the API's place in the URLs."""

import os
import subprocess
import sys
from pathlib import Path

from django.urls import reverse

REPO_ROOT = Path(__file__).resolve().parents[2]


def _settings_with(env: dict) -> subprocess.CompletedProcess:
    code = ("import django, os; os.environ['DJANGO_SETTINGS_MODULE']='console.settings'; "
            "from django.conf import settings; "
            "print(settings.DRA_WORKER_IN_PROCESS, settings.DRA_WORKER)")
    return subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True,
                          text=True, env={**os.environ, **env}, check=False)


def test_worker_defaults(settings):
    assert settings.DRA_WORKER == {"poll": 1.0, "debounce": 0.2, "lease_ttl": 30.0}


def test_worker_settings_from_the_environment():
    done = _settings_with({"DRA_WORKER_IN_PROCESS": "0", "DRA_WORKER_POLL_SECONDS": "2.5"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("False {'poll': 2.5,")


def test_bad_worker_settings_fail_clearly():
    done = _settings_with({"DRA_WORKER_LEASE_SECONDS": "soon"})
    assert done.returncode != 0
    assert "DRA_WORKER_LEASE_SECONDS='soon' is not a number of seconds" in done.stderr


def test_api_is_mounted_at_api():
    assert reverse("api:api-root") == "/api/"
    assert reverse("api:schema") == "/api/schema/"


def _event_ttl_with(value: str) -> subprocess.CompletedProcess:
    code = ("import os; os.environ['DJANGO_SETTINGS_MODULE']='console.settings'; "
            "from django.conf import settings; print(settings.DRA_EVENT_TTL)")
    return subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True,
                          text=True, env={**os.environ, "DRA_EVENT_TTL": value}, check=False)


def test_event_ttl_defaults_to_one_hour(settings):
    assert settings.DRA_EVENT_TTL == 3600.0


def test_event_ttl_takes_seconds_or_a_duration():
    for value, seconds in (("600", "600.0"), ("90m", "5400.0"), ("1h30m", "5400.0")):
        done = _event_ttl_with(value)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == seconds


def test_a_bad_event_ttl_fails_clearly():
    for value, words in (("soon", "is not a duration"), ("0", "longer than 0 seconds"),
                         ("inf", "at most 36500d")):
        done = _event_ttl_with(value)
        assert done.returncode != 0
        assert f"DRA_EVENT_TTL={value!r}: " in done.stderr and words in done.stderr, value
