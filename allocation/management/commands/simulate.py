"""``manage.py simulate``: run the engine on manifest files, never touching the database."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand

from allocation.engine.allocator import STRATEGIES
from allocation.engine.events import DEFAULT_START, format_time, parse_duration, parse_time
from allocation.engine.v1 import DEFAULT_RELEASE, RELEASES, FeatureGateError, Profile, make_profile
from allocation.management.exits import reported_failures


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
        parser.add_argument("--kubernetes-version", default=DEFAULT_RELEASE, metavar="VERSION",
                            help="the release whose DRA behaviour and feature-gate defaults "
                            f"apply: {', '.join(RELEASES)} (default %(default)s)")
        parser.add_argument("--feature-gates", default="", metavar="NAME=BOOL,...",
                            help="override feature gates as kube-scheduler's flag does, e.g. "
                            "DRAPartitionableDevices=true,AllAlpha=true")

    def handle(self, *args, **options) -> None:
        from allocation.engine.simulation import simulate_files

        try:
            now = parse_time(options["now"])
            advance = parse_duration(options["advance"]) if options["advance"] else None
            profile = _profile(options["kubernetes_version"], options["feature_gates"])
        except ValueError as exc:
            self.stderr.write(f"error: {exc}")
            sys.exit(2)
        with reported_failures(self.stderr, "simulated"):
            text = simulate_files(options["files"], options["strategy"], now, advance,
                                  options["output"], profile,
                                  lambda problem: self.stderr.write(f"warning: {problem}"))
        self.stdout.write(text, ending="")


def _profile(version: str, gates: str) -> Profile:
    """The Kubernetes profile of the flags.

    Raises:
        ValueError: an unknown version, or kube-scheduler's own refusal of the gates,
            in the form its flag parser prints it.
    """
    try:
        return make_profile(version, gates)
    except FeatureGateError as exc:
        if version not in RELEASES:
            raise ValueError(f"--kubernetes-version: {exc}") from None
        raise ValueError(f'invalid argument "{gates}" for "--feature-gates" flag: {exc}'
                         ) from None
