"""The scenarios app: what-if forks of the stored cluster, owned by users."""

from __future__ import annotations

from django.apps import AppConfig

__all__ = ["ScenariosConfig"]


class ScenariosConfig(AppConfig):
    """What-if scenarios: a baseline plus a user's changes, evaluated by the engine."""

    name = "scenarios"
    verbose_name = "What-if scenarios"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Workers re-evaluate scenarios whose baseline moved on (scenarios.worker).
        from allocation.worker import runtime
        from scenarios.worker import refresh_stale

        runtime.after_pass(refresh_stale)
