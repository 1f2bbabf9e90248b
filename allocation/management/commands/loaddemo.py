"""``manage.py loaddemo``: load the demo cluster (``examples/demo.yaml``) into the stored cluster.

Idempotent: when the stored cluster already holds objects it is left alone (so ``make run``
keeps what you changed), unless ``--replace`` makes it exactly the demo again. The import
goes through ``services.manifests.import_texts`` like any upload; the worker of the serving
process then reconciles it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from allocation.engine.manifests import InvalidManifests

DEMO = Path(settings.BASE_DIR) / "examples" / "demo.yaml"


class Command(BaseCommand):
    help = ("Load the demo cluster (examples/demo.yaml) unless the stored cluster already has "
            "objects; --replace makes it exactly the demo.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--replace", action="store_true",
                            help="replace whatever is stored with the demo")
        parser.add_argument("--file", default=str(DEMO), help="the manifests to load")

    def handle(self, *args, **options) -> None:
        from allocation.services.manifests import export_documents, import_texts

        path = Path(options["file"])
        stored = len(export_documents())
        if stored and not options["replace"]:
            self.stdout.write(f"demo: the stored cluster already has {stored} object(s); left "
                              "as it is (manage.py loaddemo --replace resets it to the demo)")
        else:
            try:
                result = import_texts([(path.name, path.read_text())], replace=True)
            except InvalidManifests as exc:
                for problem in exc.problems:
                    self.stderr.write(str(problem))
                self.stderr.write(f"{len(exc.problems)} problem(s); the demo was not loaded.")
                sys.exit(2)
            self.stdout.write(f"demo: loaded {path.name}: {result.summary()}")
        self._how_to_log_in()

    def _how_to_log_in(self) -> None:
        from allocation.services.accounts import create_first_admin

        if settings.DEBUG:  # a fresh development install: make a way in, shown once
            password = create_first_admin()
            if password is not None:
                self.stdout.write(f"demo: created the superuser admin with password {password} "
                                  "(shown once; change it at /admin/password_change/)")
                return
        users = get_user_model().objects.filter(is_active=True)
        if users.filter(is_superuser=True).exists():
            self.stdout.write("demo: log in at /accounts/login/ with your superuser account")
        else:
            self.stdout.write("demo: no user yet; create one to log in:\n"
                              "  .venv/bin/python manage.py createsuperuser")
