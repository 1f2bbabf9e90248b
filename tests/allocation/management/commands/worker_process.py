"""``manage.py worker`` in a separate process, with hooks the fault tests need.

Run as ``python worker_process.py NAME LOG MODE`` with the repository on ``PYTHONPATH`` and
``DATABASE_URL`` set. Every line it appends to ``LOG`` starts with ``NAME``; appends of one
short line are atomic, so several processes share one log in the order things happened.

MODE:

- ``plain``: the worker as it is, logging its passes and its attempts at the lease;
- ``hang-in-save``: the first save writes every row, logs ``saving`` and then hangs inside
  its transaction (the test kills the process there);
- ``slow``: the first pass lasts several leases: a controller keeps the simulation going in
  short steps (so checkpoints come often) until ``2.5 x`` the lease has passed and another
  worker has tried for the lease after it would have expired without renewals.
"""

from __future__ import annotations

import os
import sys
import time

import django


def main(name: str, log_path: str, mode: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    django.setup()
    from django.conf import settings

    from allocation.engine import simulation
    from allocation.services import reconcile
    from allocation.worker import lease

    def log(line: str) -> None:
        with open(log_path, "a") as out:
            out.write(f"{name} {line}\n")

    real_reconcile, real_take = reconcile.reconcile, lease.Keeper.take

    def logged_reconcile(*args, **kwargs):
        log("start")
        result = real_reconcile(*args, **kwargs)
        log(f"end {result.outcome}")
        return result

    def logged_take(self):
        taken = real_take(self)
        log(f"take {taken}")
        return taken

    reconcile.reconcile, lease.Keeper.take = logged_reconcile, logged_take

    if mode == "hang-in-save":
        real_save = reconcile.save_plan

        def save_and_hang(cluster, plan):
            real_save(cluster, plan)  # every row written; the transaction is still open
            log("saving")
            time.sleep(3600)

        reconcile.save_plan = save_and_hang
    elif mode == "slow":
        ttl = settings.DRA_WORKER["lease_ttl"]
        done = []

        class Slow:
            name = "slow"

            def __init__(self) -> None:
                self.began = None

            def reconcile(self, state) -> bool:
                if done:
                    return False
                self.began = self.began or time.monotonic()
                elapsed = time.monotonic() - self.began
                if elapsed > 1.5 * ttl and not self._late():
                    log("late")
                # (Bounded: if the other worker never tries, the test says so.)
                if elapsed > 2.5 * ttl and (self._tried_since_late() or elapsed > 120):
                    done.append(True)
                    return False
                time.sleep(ttl / 20)
                return True  # "changed": another round, another checkpoint

            @staticmethod
            def _lines() -> list[str]:
                with open(log_path) as text:
                    return text.read().splitlines()

            def _late(self) -> bool:
                return f"{name} late" in self._lines()

            def _tried_since_late(self) -> bool:
                lines = self._lines()
                late = lines.index(f"{name} late") if f"{name} late" in lines else len(lines)
                return any(not line.startswith(f"{name} ") and " take " in line
                           for line in lines[late:])

        simulation.CONTROLLER_FACTORIES.append(lambda strategy: Slow())

    log("ready")
    from django.core.management import call_command

    call_command("worker")


if __name__ == "__main__":
    main(*sys.argv[1:4])
