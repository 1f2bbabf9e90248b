"""``manage.py export``: print the stored cluster as a ``v1 List`` (like ``simulate``)."""

from __future__ import annotations

import sys
import traceback

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = ("Print every stored object, then the Events, as a kind: List (deterministic). "
            "Exit 0 exported, 1 internal error.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")

    def handle(self, *args, **options) -> None:
        from allocation.services.manifests import export_text

        try:
            text = export_text(options["output"])
        except Exception:
            self.stderr.write("internal error: the export failed; please report this:")
            self.stderr.write(traceback.format_exc())
            sys.exit(1)
        self.stdout.write(text, ending="")
