"""The console served by daphne in a subprocess, as it is deployed, for end-to-end tests.

Unlike ``tests/browser/live_server.py`` (daphne in a thread of the test process, on the
test's in-memory database), this is a separate process with its own settings and its own
database connections, so writes really compete: a file-backed SQLite database (what
``make run`` uses) when the suite runs on SQLite, the test database itself when it runs on
PostgreSQL (CI's second pass). Either way the server's in-process worker reconciles.

:func:`database_url` picks the database; :func:`manage` runs a management command with the
server's environment; :func:`start` starts daphne on a free 127.0.0.1 port and waits until
it accepts connections. :class:`Session` logs in through the login form and calls the API
with the session cookie and the CSRF token, as a browser would.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

__all__ = ["REPO_ROOT", "database_url", "environment", "manage", "create_user", "free_port",
           "start", "Server", "Session"]

REPO_ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT = 60.0  # bounds a hang; never an assertion on speed


def database_url(tmp_path: Path) -> tuple[str, bool]:
    """``(DATABASE_URL, needs migrate)`` for the server: see the module docstring.

    On PostgreSQL the caller must use ``transactional_db`` (the server's writes commit; the
    fixture empties the tables afterwards).
    """
    from django.db import connection

    if connection.vendor == "postgresql":
        s = connection.settings_dict
        quote = urllib.parse.quote
        url = (f"postgres://{quote(s['USER'], safe='')}:{quote(s['PASSWORD'], safe='')}"
               f"@{s['HOST']}:{s['PORT'] or 5432}/{quote(s['NAME'], safe='')}")
        return url, False
    return f"sqlite:///{tmp_path / 'db.sqlite3'}", True


def environment(database: str, settings: str = "console.settings", **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DJANGO_", "DATABASE_", "DRA_"))}
    env.update({"DJANGO_SETTINGS_MODULE": settings, "DATABASE_URL": database,
                "DRA_WORKER_POLL_SECONDS": "0.2", "PYTHONUNBUFFERED": "1"})
    env.update(extra)
    return env


def manage(env: dict, *args: str, stdin: str | None = None) -> str:
    result = subprocess.run([sys.executable, str(REPO_ROOT / "manage.py"), *args],
                            cwd=REPO_ROOT, env=env, input=stdin, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, f"manage.py {' '.join(args)}:\n{result.stdout}{result.stderr}"
    return result.stdout


def create_user(env: dict, name: str, password: str, staff: bool = False) -> None:
    manage(env, "shell", "-c",
           "from django.contrib.auth import get_user_model; "
           f"get_user_model().objects.create_user({name!r}, password={password!r}, "
           f"is_staff={staff!r})")


@dataclass
class Server:
    url: str
    process: subprocess.Popen
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(15)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(env: dict, log: Path, host: str = "127.0.0.1", port: int | None = None) -> Server:
    """daphne (the venv's script: the in-process worker starts under it) on ``port`` (default:
    a free one) of 127.0.0.1; ``host`` is the name the URL uses."""
    port = port or free_port()
    daphne = Path(sys.executable).parent / "daphne"
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(daphne), "-b", "127.0.0.1", "-p", str(port), "console.asgi:application"],
            cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    server = Server(f"http://{host}:{port}", process, log)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"daphne exited with {process.returncode}:\n{server.output()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return server
        except OSError as exc:
            if time.monotonic() > deadline:
                server.stop()
                raise RuntimeError(f"daphne did not listen on {port}:\n{server.output()}"
                                   ) from exc
            time.sleep(0.1)


class Session:
    """A signed-in user's cookies and CSRF token, usable from many threads at once."""

    def __init__(self, base_url: str, username: str, password: str) -> None:
        self.base_url = base_url
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        form = self.opener.open(f"{base_url}/accounts/login/", timeout=60).read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
        data = urllib.parse.urlencode({"username": username, "password": password,
                                       "csrfmiddlewaretoken": token}).encode()
        self.opener.open(f"{base_url}/accounts/login/", data, timeout=60).read()
        assert self.cookie("sessionid"), "login failed"

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.jar if c.name == name), None)

    def request(self, method: str, path: str, body: bytes | None = None,
                content_type: str = "application/json") -> tuple[int, bytes]:
        """``(status, body)``; error statuses are returned, not raised."""
        headers = {"X-CSRFToken": self.cookie("csrftoken") or "", "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        request = urllib.request.Request(f"{self.base_url}{path}", data=body, method=method,
                                         headers=headers)
        try:
            with self.opener.open(request, timeout=120) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def json(self, path: str) -> dict:
        status, body = self.request("GET", path)
        assert status == 200, body
        return json.loads(body)
