"""``manage.py mirror --kubeconfig PATH [--context NAME]``: import a live cluster, then keep
the stored cluster in step with it (watches), read-only (docs/live-cluster.md)."""

from __future__ import annotations

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = ("Import a live cluster and keep the stored cluster in step with its watches; "
            "only get, list and watch are sent. Runs until interrupted. Exit 2 when the "
            "cluster cannot be read at the start, 1 internal error.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--kubeconfig", metavar="PATH",
                            help="the kubeconfig (default: KUBECONFIG, else in-cluster, else "
                                 "~/.kube/config); never stored")
        parser.add_argument("--context", metavar="NAME",
                            help="the kubeconfig context (default: its current context)")
        parser.add_argument("--replace", action="store_true",
                            help="make the stored cluster exactly the live cluster first")

    def handle(self, *args, **options) -> None:
        from clusters.commands import mirror_cluster

        mirror_cluster(self, options["kubeconfig"], options["context"], options["replace"])
