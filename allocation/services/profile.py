"""The Kubernetes profile the console uses: settings ``DRA_KUBERNETES_VERSION`` and
``DRA_FEATURE_GATES`` (docs/console.md, "Settings"; docs/v1.md, "Profiles and feature
gates"), the same choice as ``simulate --kubernetes-version --feature-gates``."""

from __future__ import annotations

from django.conf import settings

from allocation.engine.v1 import Profile, make_profile

__all__ = ["console_profile"]


def console_profile() -> Profile:
    """The profile of the settings (checked when the settings load).

    Returns:
        The profile imports load under and the worker simulates under.
    """
    return make_profile(settings.DRA_KUBERNETES_VERSION, settings.DRA_FEATURE_GATES)
