"""Where the stored cluster comes from when it is read from a live cluster.

``ClusterSource`` is one row: the context read, what the importer or mirror is doing, the
last event and the last error (shown on the dashboard). Credentials are never stored: only
the context's name and the API server's URL (docs/live-cluster.md, "Credentials").
``MirroredObject`` lists the stored objects that came from the cluster: those are read-only
in the console and API, and a relist deletes those the cluster no longer has.
"""

from __future__ import annotations

from django.db import models

__all__ = ["ClusterSource", "MirroredObject"]


class ClusterSource(models.Model):
    """The live cluster the stored cluster was imported from or is mirroring (one row)."""

    IMPORTED, SYNCING, MIRRORING, FAILING, STOPPED = (
        "imported", "syncing", "mirroring", "failing", "stopped")
    STATES = [(s, s) for s in (IMPORTED, SYNCING, MIRRORING, FAILING, STOPPED)]

    context = models.CharField(max_length=253, help_text="The kubeconfig context read.")
    server = models.CharField(max_length=1000, blank=True,
                              help_text="The API server's URL (no credentials).")
    state = models.CharField(max_length=16, choices=STATES, default=IMPORTED)
    started_at = models.DateTimeField(null=True, blank=True)
    imported_at = models.DateTimeField(null=True, blank=True)
    last_event_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, help_text="The last error, empty when healthy.")
    error_since = models.DateTimeField(null=True, blank=True)
    objects_count = models.PositiveIntegerField(default=0)
    rejected = models.JSONField(default=list, blank=True,
                                help_text="The last objects refused, one problem each.")
    versions = models.JSONField(default=dict, blank=True,
                                help_text="The API version read per kind.")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.context} ({self.state})"


class MirroredObject(models.Model):
    """A stored object read from the live cluster (its identity, as the store keys it)."""

    group = models.CharField(max_length=253, blank=True)
    kind = models.CharField(max_length=64)
    namespace = models.CharField(max_length=253, blank=True)
    name = models.CharField(max_length=253)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["group", "kind", "namespace", "name"],
                                               name="mirrored_identity_unique")]
        indexes = [models.Index(fields=["kind"])]

    @property
    def identity(self) -> tuple[str, str, str, str]:
        return self.group, self.kind, self.namespace, self.name
