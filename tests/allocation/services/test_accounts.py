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
