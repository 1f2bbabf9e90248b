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
        # A committed write that moves the baseline queues the re-evaluation of scenarios
        # behind it, as a task (scenarios.tasks; docs/console.md, "Tasks").
        from allocation.services import broadcast
        from scenarios.tasks import enqueue_refresh

        broadcast.subscribe(enqueue_refresh)
