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
