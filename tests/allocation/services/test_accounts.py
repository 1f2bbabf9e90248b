import pytest
from django.contrib.auth import get_user_model

from allocation.services.accounts import create_first_admin


@pytest.mark.django_db
def test_first_admin_only_on_an_empty_install_with_a_random_password():
    first = create_first_admin()
    assert first and get_user_model().objects.get(username="admin").is_superuser
    assert create_first_admin() is None
    get_user_model().objects.all().delete()
    assert create_first_admin() != first


@pytest.mark.django_db
def test_a_token_is_created_replaced_and_revoked():
    from rest_framework.authtoken.models import Token

    from allocation.services.accounts import create_token, revoke_token, token_info, tokens

    user = get_user_model().objects.create_user("ops")
    first = create_token(user)
    assert token_info(user).ending == first[-4:] and len(first) == 40
    second = create_token(user)  # replaces the first
    assert second != first
    assert list(Token.objects.filter(user=user).values_list("key", flat=True)) == [second]
    assert [t.username for t in tokens()] == ["ops"]
    assert revoke_token(user) is True
    assert token_info(user) is None and revoke_token(user) is False


@pytest.mark.django_db
def test_an_inactive_user_gets_no_token():
    from allocation.services.accounts import create_token

    user = get_user_model().objects.create_user("gone", is_active=False)
    with pytest.raises(ValueError, match="gone is not an active user"):
        create_token(user)
