"""The clusters app: read a live cluster into the stored cluster, and mirror it."""

from __future__ import annotations

from django.apps import AppConfig

__all__ = ["ClustersConfig"]


class ClustersConfig(AppConfig):
    """Import and mirror a live Kubernetes cluster, read-only (docs/live-cluster.md)."""

    name = "clusters"
    verbose_name = "Live cluster source"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Mirrored objects are read-only for people: the store's write checks ask us.
        from allocation.services import permissions
        from clusters.services import refuse_mirrored

        permissions.add_read_only_check(refuse_mirrored)
