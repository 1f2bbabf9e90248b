"""``manage.py import FILE...`` or ``import --kubeconfig PATH [--context NAME]``: validate
manifests, or read a live cluster, and store them in the cluster."""

from __future__ import annotations

import sys
import traceback

from django.core.management.base import BaseCommand, CommandError

from allocation.engine.manifests import InvalidManifests


class Command(BaseCommand):
    help = ("Import DRA manifests into the stored cluster (same validation as simulate), or "
            "read a live cluster with --kubeconfig/--in-cluster (docs/live-cluster.md). "
            "Exit 0 imported, 2 invalid input or unreadable cluster (nothing changed, every "
            "problem listed), 1 internal error.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("files", nargs="*", metavar="FILE")
        parser.add_argument("--replace", action="store_true",
                            help="make the stored cluster exactly the input (delete the rest)")
        parser.add_argument("--kubeconfig", metavar="PATH",
                            help="read the live cluster of this kubeconfig (never stored)")
        parser.add_argument("--context", metavar="NAME",
                            help="the kubeconfig context (default: its current context)")
        parser.add_argument("--in-cluster", action="store_true",
                            help="read the live cluster of KUBECONFIG, else of this pod's "
                                 "service account")

    def handle(self, *args, **options) -> None:
        from_cluster = options["kubeconfig"] or options["in_cluster"]
        if from_cluster and options["files"]:
            raise CommandError("give files or a cluster (--kubeconfig/--in-cluster), not both")
        if not from_cluster and not options["files"]:
            raise CommandError("give FILE... or --kubeconfig PATH (or --in-cluster)")
        if from_cluster:
            from clusters.commands import import_from_cluster

            import_from_cluster(self, options["kubeconfig"], options["context"],
                                options["replace"])
            return
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
