"""``manage.py import FILE...``: validate manifests and store them in the cluster."""

from __future__ import annotations

import sys
import traceback

from django.core.management.base import BaseCommand

from allocation.engine.manifests import InvalidManifests


class Command(BaseCommand):
    help = ("Import DRA manifests into the stored cluster (same validation as simulate). "
            "Exit 0 imported, 2 invalid input (nothing changed, every problem listed), "
            "1 internal error.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("files", nargs="+", metavar="FILE")
        parser.add_argument("--replace", action="store_true",
                            help="make the stored cluster exactly these files (delete the rest)")

    def handle(self, *args, **options) -> None:
        from allocation.services.manifests import import_files

        try:
            result = import_files(options["files"], replace=options["replace"])
        except InvalidManifests as exc:
            for problem in exc.problems:
                self.stderr.write(str(problem))
            self.stderr.write(f"{len(exc.problems)} problem(s); nothing was imported.")
            sys.exit(2)
        except Exception:
            self.stderr.write("internal error: the import failed; nothing was imported; "
                              "please report this:")
            self.stderr.write(traceback.format_exc())
            sys.exit(1)
        self.stdout.write(f"imported: {result.summary()}")
        for warning in result.warnings:
            self.stderr.write(f"warning: {warning}")
