"""``manage.py worker`` as a separate process: killed mid-save, and a pass longer than its lease.

These run the real command in child processes on a database of their own, made for the
test: a SQLite file, or a new PostgreSQL database when ``DATABASE_URL`` names PostgreSQL (CI's
second pass), so the same tests run on both. Nothing waits for a fixed time: the tests poll
the log the workers append to and the stored cluster, with generous limits that only bound
a hang.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings

from console.env import parse_database_url
from tests import factories as f

REPO = Path(__file__).resolve().parents[4]
WORKER = Path(__file__).with_name("worker_process.py")
LEASE_SECONDS = 4.0
PATIENCE = 180.0  # seconds: a bound on hangs, not an expectation


@contextmanager
def _database(tmp_path: Path):
    """The DATABASE_URL of a new, empty database of the configured kind; dropped after."""
    url = os.environ.get("DATABASE_URL", "")
    config = parse_database_url(url, base_dir=Path(settings.BASE_DIR))
    if config["ENGINE"] != "django.db.backends.postgresql":
        yield f"sqlite:///{tmp_path / 'fault.sqlite3'}"
        return
    import psycopg

    name = f"{config['NAME']}_fault_{uuid.uuid4().hex[:8]}"
    connect = {"host": config["HOST"], "port": config["PORT"] or None, "user": config["USER"],
               "password": config["PASSWORD"], "dbname": config["NAME"], "autocommit": True}
    with psycopg.connect(**connect) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        head, _, _ = url.partition("?")
        yield head.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(**connect) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _env(database_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}  # no shared channel layer
    env.update(DATABASE_URL=database_url, DRA_WORKER_IN_PROCESS="0",
               DRA_WORKER_LEASE_SECONDS=str(LEASE_SECONDS), DRA_WORKER_POLL_SECONDS="0.1",
               DRA_WORKER_DEBOUNCE_SECONDS="0.01", PYTHONPATH=str(REPO))
    return env


def _manage(env: dict, *args: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=PATIENCE)
    assert done.returncode == 0, f"manage.py {' '.join(args)}: {done.stderr}"
    return done.stdout


def _docs() -> list[dict]:
    docs = [f.resource_class()]
    for n in range(3):
        docs += [f.node(f"n{n}"), f.named_slice(f"n{n}", [f.device(f"d{n}-{i}")
                                                          for i in range(2)])]
    for p in range(5):
        docs += [f.claim(f"c{p}"), f.pod(f"p{p}", claims={"gpu": f"c{p}"})]
    return docs


@pytest.fixture
def cluster(tmp_path):
    """A migrated database of its own holding ``_docs()``; yields the workers' environment."""
    with _database(tmp_path) as url:
        env = _env(url)
        _manage(env, "migrate", "--noinput")
        manifest = tmp_path / "cluster.yaml"
        manifest.write_text(f.to_yaml(_docs()))
        _manage(env, "import", str(manifest))
        yield env


class _Workers:
    """Worker processes sharing one log; all killed at the end."""

    def __init__(self, env: dict, log: Path) -> None:
        self.env, self.log, self.processes, self.killed = env, log, [], []

    def start(self, name: str, mode: str) -> subprocess.Popen:
        process = subprocess.Popen([sys.executable, str(WORKER), name, str(self.log), mode],
                                   cwd=REPO, env=self.env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        self.processes.append(process)
        return process

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def wait_for(self, line: str) -> None:
        deadline = time.monotonic() + PATIENCE
        while line not in self.lines():
            for process in self.processes:
                if process not in self.killed:
                    assert process.poll() is None, f"a worker exited: {process.stderr.read()}"
            assert time.monotonic() < deadline, f"no {line!r} in {self.lines()}"
            time.sleep(0.1)

    def kill(self, process: subprocess.Popen) -> None:
        """``kill -9``: no clean-up, no lease release, the transaction left open."""
        self.killed.append(process)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(PATIENCE)

    def kill_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.wait(PATIENCE)
            process.stderr.close()


@pytest.fixture
def workers(cluster, tmp_path):
    group = _Workers(cluster, tmp_path / "workers.log")
    yield group
    group.kill_all()


def _export(env: dict) -> dict:
    return json.loads(_manage(env, "export", "-o", "json"))


def _objects(exported: dict) -> list[dict]:
    items = [i for i in exported["items"] if i["kind"] != "Event"]
    for item in items:  # the baseline runs on real time
        for condition in item.get("status", {}).get("conditions", ()):
            condition.pop("lastTransitionTime", None)
    return items


def test_a_worker_killed_mid_save_loses_nothing_and_the_next_one_converges(workers):
    before = _export(workers.env)
    hung = workers.start("w1", "hang-in-save")
    workers.wait_for("w1 saving")  # every row written, the transaction open
    workers.kill(hung)
    assert _export(workers.env) == before  # nothing half-written

    workers.start("w2", "plain")  # takes over once the dead worker's lease expires
    workers.wait_for("w2 end saved")
    expected = _objects(f.run(_docs()).output())
    assert _objects(_export(workers.env)) == expected
    assert all(p["spec"].get("nodeName") for p in expected if p["kind"] == "Pod")


def test_a_pass_longer_than_the_lease_keeps_it_and_no_other_worker_overlaps(workers):
    workers.start("w1", "slow")
    workers.wait_for("w1 start")  # w1 holds the lease and is in its long pass
    workers.start("w2", "plain")
    workers.wait_for("w1 end saved")
    lines = workers.lines()
    pass_of_w1 = lines[lines.index("w1 start"):lines.index("w1 end saved")]
    assert "w1 late" in pass_of_w1  # the pass outlived its lease one and a half times ...
    late = pass_of_w1[pass_of_w1.index("w1 late"):]
    assert "w2 take False" in late  # ... and w2 tried for the lease after that, in vain
    assert not [line for line in pass_of_w1 if line.startswith("w2 ") and line != "w2 ready"
                and line != "w2 take False"]  # w2 never took the lease, never started a pass
    assert all(p["spec"].get("nodeName") for p in _export(workers.env)["items"]
               if p["kind"] == "Pod")
