"""``manage.py worker``: reconcile the stored cluster in this process, for scale-out.

Run it next to servers started with ``DRA_WORKER_IN_PROCESS=0``. Several workers may run;
the lease lets one reconcile at a time. Each also runs the queued background tasks in a
thread (``allocation.worker.tasks``; ``--no-tasks`` leaves them to ``db_worker`` or RQ
workers). ``--once`` runs a single pass, then the tasks due, and exits.
"""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Reconcile the stored cluster continuously (the baseline worker)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--once", action="store_true",
                            help="run one pass (if the lease is free), then the tasks due, "
                                 "and exit")
        parser.add_argument("--no-tasks", action="store_true",
                            help="do not run queued background tasks in this process")

    def handle(self, *args, **options) -> None:
        from allocation.worker.loop import Worker
        from allocation.worker.tasks import TaskRunner, run_pending

        worker = Worker()
        if options["once"]:
            result = worker.run_once()
            if result is None:
                self.stderr.write("the lease is held by another worker; nothing done")
                sys.exit(3)
            self.stdout.write(f"{result.outcome} at revision {result.revision}")
            if not options["no_tasks"]:
                self.stdout.write(f"{run_pending()} task(s) run")
            return
        from allocation.worker.listen import listen

        # woken by other processes' writes as they commit, not at its next poll
        listen(worker.wake, worker.stopping)
        runner = None if options["no_tasks"] else TaskRunner()
        if runner is not None:
            runner.start()
        self.stdout.write(f"worker {worker.holder} running; Ctrl-C stops it")
        try:
            worker.run()
        except KeyboardInterrupt:
            from allocation.worker import lease

            lease.release(worker.holder)
        finally:
            if runner is not None:
                runner.stop()
