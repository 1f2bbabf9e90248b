"""``manage.py convert --to v1``: seed-dialect manifests as resource.k8s.io/v1 documents.

The mapping is spec ``v1.md`` section 5 (``docs/v1.md``, "Converting seed manifests").
Exit 0 converted (maybe with warnings on stderr), 2 invalid input (the loader's problems, as
``simulate`` prints them), 3 an object could not be converted and ``--lossy`` was not given
(nothing on stdout), 1 an internal error.
"""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from allocation.engine.convert import COUNTER_MODES, convert_loaded
from allocation.engine.manifests import load_files
from allocation.engine.writer import as_list, dump
from allocation.management.exits import reported_failures


class Command(BaseCommand):
    help = ("Convert seed-dialect manifests (resource.k8s.io/v1alpha2, DriverSimulation, ...) "
            "to resource.k8s.io/v1. One warning per lossy item on stderr. Exit 0 converted, "
            "2 invalid input, 3 something could not be converted (see --lossy).")
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser) -> None:
        parser.add_argument("files", nargs="+", metavar="FILE")
        parser.add_argument("--to", choices=("v1",), required=True,
                            help="the API version to write (only v1)")
        parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
        parser.add_argument("--lossy", action="store_true",
                            help="write the best approximation of objects that have no "
                                 "faithful v1 form (still warned)")
        parser.add_argument("--counters", choices=COUNTER_MODES, default="units",
                            help="counter instances as N unit devices matched on "
                                 "'instance' (units, GA) or as one device with consumable "
                                 "capacity 'count' (consumable, DRAConsumableCapacity)")

    def handle(self, *args, **options) -> None:
        with reported_failures(self.stderr, "converted"):
            paths = [Path(name) for name in options["files"]]
            loaded = load_files(paths)  # every file was readable
            result = convert_loaded(loaded, counters=options["counters"],
                                    lossy=options["lossy"],
                                    texts=[(str(p), p.read_text(encoding="utf-8"))
                                           for p in paths])
            text = dump(as_list(result.items), options["output"])
        for warning in result.report.warnings:
            self.stderr.write(str(warning))
        if not result.complete and not options["lossy"]:
            names = ", ".join(obj.key.__str__() for obj in result.report.failed)
            self.stderr.write(f"{len(result.report.failed)} object(s) could not be converted "
                              f"({names}); nothing was written. Use --lossy to write "
                              "approximations.")
            sys.exit(3)
        self.stdout.write(text, ending="")
