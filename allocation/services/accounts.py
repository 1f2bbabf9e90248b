"""Accounts: the first user of a fresh install, and users' API tokens.

A token (DRF's ``rest_framework.authtoken``: one per user) lets a script use the REST API
with ``Authorization: Token <key>``, no session and no CSRF token (docs/console.md,
"Tokens"). Created and revoked here only: from the user's account page and by
``manage.py apitoken``.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import transaction
from rest_framework.authtoken.models import Token

__all__ = ["create_first_admin", "TokenInfo", "create_token", "revoke_token", "token_info",
           "tokens"]


def create_first_admin(username: str = "admin") -> str | None:
    """Create a superuser with a random password when there is no user at all.

    Returns the password (to show once), or None when users exist already. A random
    password rather than a fixed one: nothing secret lives in the repository.
    """
    users = get_user_model()
    with transaction.atomic():
        if users.objects.exists():
            return None
        password = secrets.token_urlsafe(12)
        users.objects.create_superuser(username, password=password)
    return password


@dataclass(frozen=True)
class TokenInfo:
    """What may be shown of a token after its creation: whose, when, and its last four
    characters (the key itself is shown once, when it is created)."""

    username: str
    created: datetime
    ending: str


def create_token(user) -> str:
    """A new API token for ``user``, replacing (revoking) any token they had. Returns the key,
    to show once.

    Raises:
        ValueError: ``user`` is not active (an inactive user's token would be refused).
    """
    if not user.is_active:
        raise ValueError(f"{user.get_username()} is not an active user")
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user).key


def revoke_token(user) -> bool:
    """Delete ``user``'s API token; whether there was one. Requests with it fail from now."""
    with transaction.atomic():
        deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)


def _info(token: Token) -> TokenInfo:
    return TokenInfo(token.user.get_username(), token.created, token.key[-4:])


def token_info(user) -> TokenInfo | None:
    """``user``'s token as it may be shown (never the key), or None."""
    token = Token.objects.filter(user=user).select_related("user").first()
    return None if token is None else _info(token)


def tokens() -> list[TokenInfo]:
    """Every user's token, by user name."""
    return [_info(t) for t in Token.objects.select_related("user").order_by("user__username")]
