"""``manage.py apitoken create|revoke USER`` and ``manage.py apitoken list``: API tokens.

``create`` prints the new key (once; it replaces any token the user had), ``revoke`` deletes
it, ``list`` shows whose tokens exist with their last four characters. Writes go through
:mod:`allocation.services.accounts`.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from allocation.services import accounts


class Command(BaseCommand):
    help = ("API tokens for the REST API (Authorization: Token <key>): create (prints the key; "
            "replaces the user's token), revoke, or list.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("action", choices=("create", "revoke", "list"))
        parser.add_argument("user", nargs="?", help="user name (create, revoke)")

    def handle(self, *args, **options) -> None:
        action, username = options["action"], options["user"]
        if action == "list":
            for info in accounts.tokens():
                self.stdout.write(f"{info.username}\t...{info.ending}\t"
                                  f"{info.created.isoformat(timespec='seconds')}")
            return
        if not username:
            raise CommandError(f"apitoken {action}: name the user")
        try:
            user = get_user_model().objects.get_by_natural_key(username)
        except get_user_model().DoesNotExist:
            raise CommandError(f"apitoken {action}: no user {username!r}") from None
        if action == "create":
            try:
                self.stdout.write(accounts.create_token(user))
            except ValueError as exc:
                raise CommandError(f"apitoken create: {exc}") from None
        elif not accounts.revoke_token(user):
            raise CommandError(f"apitoken revoke: {username} has no token")
        else:
            self.stdout.write(f"revoked the token of {username}")
