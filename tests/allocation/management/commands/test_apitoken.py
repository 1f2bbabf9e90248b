"""manage.py apitoken create|revoke|list: API tokens through the accounts service."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("apitoken", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_create_prints_the_key_list_shows_its_end_revoke_deletes_it():
    get_user_model().objects.create_user("ops")

    key = _run("create", "ops").strip()

    assert Token.objects.get(user__username="ops").key == key
    [line] = _run("list").splitlines()
    assert line.startswith(f"ops\t...{key[-4:]}\t")
    assert _run("revoke", "ops").strip() == "revoked the token of ops"
    assert not Token.objects.exists() and _run("list") == ""


@pytest.mark.django_db
@pytest.mark.parametrize(("args", "message"), [
    (("create",), "apitoken create: name the user"),
    (("create", "nobody"), "apitoken create: no user 'nobody'"),
    (("revoke", "ops"), "apitoken revoke: ops has no token"),
])
def test_mistakes_are_errors_naming_what_is_wrong(args, message):
    get_user_model().objects.create_user("ops")
    with pytest.raises(CommandError, match=f"^{message}$"):
        _run(*args)
