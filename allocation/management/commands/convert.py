"""``manage.py convert --to v1``: seed-dialect manifests as resource.k8s.io/v1 documents.

The mapping is spec ``v1.md`` section 5 (``docs/v1.md``, "Converting seed manifests").
Exit 0 converted (maybe with warnings on stderr), 2 invalid input (the loader's problems, as
``simulate`` prints them), 3 an object could not be converted and ``--lossy`` was not given
(nothing on stdout), 1 an internal error. A thin wrapper: the options and the run are
``allocation.engine.cli``'s, shared with ``draplanner convert``.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from allocation.engine.cli import CONVERT_HELP, add_convert_arguments, run_convert


class Command(BaseCommand):
    help = CONVERT_HELP
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser) -> None:
        add_convert_arguments(parser)

    def handle(self, *args, **options) -> None:
        run_convert(options, self.stdout, self.stderr)
