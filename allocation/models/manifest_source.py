"""The YAML text an object was last saved from in the editor or the admin, comments and all.

The stored document is canonical JSON (``models/base.py``): it cannot hold comments, key
order or block style. The editor keeps the text it saved here, by identity, and opens the
next edit from it with the current document merged in
(``allocation.engine.manifests.round_trip.merge_document``): what changed since (the worker,
an upload, the API) shows, and what the person wrote around it stays. Written only by
``allocation.services.editor``.
"""

from __future__ import annotations

from django.db import models

__all__ = ["ManifestSource"]


class ManifestSource(models.Model):
    """One object's last edited YAML, by kind (model label), namespace and name."""

    model = models.CharField(max_length=100, help_text="The stored object's model label.")
    namespace = models.CharField(max_length=253, blank=True)
    name = models.CharField(max_length=253)
    text = models.TextField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["model", "namespace", "name"],
                                               name="allocation_manifestsource_unique")]

    def __str__(self) -> str:
        return f"{self.model} {self.namespace}/{self.name}" if self.namespace else \
            f"{self.model} {self.name}"
