"""``manage.py simulate``: run the engine on manifest files, never touching the database."""

from __future__ import annotations

import sys
import traceback

from django.core.management.base import BaseCommand

from allocation.engine.allocator import STRATEGIES
from allocation.engine.events import DEFAULT_START, format_time, parse_duration, parse_time
from allocation.engine.manifests import InvalidManifests


class Command(BaseCommand):
    help = ("Simulate DRA manifests to a fixed point and print every object with its status, "
            "then the Events. Exit 0 simulated, 2 invalid input, 1 internal error.")
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser) -> None:
        parser.add_argument("files", nargs="+", metavar="FILE")
        parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
        parser.add_argument("--strategy", choices=STRATEGIES, default="first-fit")
        parser.add_argument("--advance", default=None, metavar="DURATION",
                            help="run the virtual clock further, e.g. 90s, 20m, 8h")
        parser.add_argument("--now", default=format_time(DEFAULT_START), metavar="RFC3339",
                            help="start of the virtual clock (default %(default)s)")

    def handle(self, *args, **options) -> None:
        from allocation.engine.simulation import simulate_files

        try:
            now = parse_time(options["now"])
            advance = parse_duration(options["advance"]) if options["advance"] else None
        except ValueError as exc:
            self.stderr.write(f"error: {exc}")
            sys.exit(2)
        try:
            text = simulate_files(options["files"], options["strategy"], now, advance,
                                  options["output"])
        except InvalidManifests as exc:
            for problem in exc.problems:
                self.stderr.write(str(problem))
            self.stderr.write(f"{len(exc.problems)} problem(s); nothing was simulated.")
            sys.exit(2)
        except Exception:  # an engine bug: say so plainly, with the traceback
            self.stderr.write("internal error: the planner failed; please report this:")
            self.stderr.write(traceback.format_exc())
            sys.exit(1)
        self.stdout.write(text, ending="")
