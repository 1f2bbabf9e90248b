"""allocation.views.account: the user's page creates (showing the key once) and revokes
their API token through the accounts service."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token


@pytest.mark.django_db
def test_create_shows_the_key_once_then_only_its_end_and_revoke_deletes_it(client,
                                                                          django_user_model):
    user = django_user_model.objects.create_user("alice")
    client.force_login(user)
    assert "You have no token." in client.get("/account/").content.decode()

    created = client.post("/account/", {"action": "create"}).content.decode()

    key = Token.objects.get(user=user).key
    assert f'<code id="new-token">{key}</code>' in created
    later = client.get("/account/").content.decode()
    assert key not in later and f"ending in <code>{key[-4:]}</code>" in later

    revoked = client.post("/account/", {"action": "revoke"}, follow=True).content.decode()
    assert "Your API token was revoked." in revoked and not Token.objects.exists()


@pytest.mark.django_db
def test_the_page_needs_a_signed_in_user(client):
    assert client.get("/account/").status_code == 302
    assert client.post("/account/", {"action": "create"}).status_code == 302
    assert not Token.objects.exists()
