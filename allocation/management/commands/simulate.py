"""``manage.py simulate``: run the engine on manifest files, never touching the database.

A thin wrapper: the options and the run are ``allocation.engine.cli``'s, shared with the
``draplanner simulate`` console script (same output, same exit codes).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from allocation.engine.cli import SIMULATE_HELP, add_simulate_arguments, run_simulate


class Command(BaseCommand):
    help = SIMULATE_HELP
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser) -> None:
        add_simulate_arguments(parser)

    def handle(self, *args, **options) -> None:
        run_simulate(options, self.stdout, self.stderr)
