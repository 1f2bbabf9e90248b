"""Accounts: the first user of a fresh development install."""

from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.db import transaction

__all__ = ["create_first_admin"]


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
