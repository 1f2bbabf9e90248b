"""``console_profile``: the settings DRA_KUBERNETES_VERSION and DRA_FEATURE_GATES."""

from __future__ import annotations

from django.test import override_settings

from allocation.services.profile import console_profile


def test_the_default_is_the_newest_release():
    assert console_profile().release == "1.36"


@override_settings(DRA_KUBERNETES_VERSION="1.34",
                   DRA_FEATURE_GATES="DRAConsumableCapacity=true")
def test_the_settings_choose_release_and_gates():
    profile = console_profile()
    assert profile.release == "1.34"
    assert profile.gates["DRAConsumableCapacity"] is True
