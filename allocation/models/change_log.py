"""The change log: which objects each revision wrote, so a worker catches up by reading
only those (docs/console.md, "The worker")."""

from __future__ import annotations

from django.db import models

__all__ = ["Change"]


class Change(models.Model):
    """One object created, replaced or deleted by the write that made ``revision``.

    Written by ``services/writes.apply_plan`` in the write's own transaction; the identity
    is the row's (API group for vendor objects else "", kind, namespace or "", name). Old
    entries are pruned (``Cluster.changes_from`` says from which revision the log is whole).
    """

    revision = models.BigIntegerField(db_index=True)
    group = models.CharField(max_length=253, blank=True)
    kind = models.CharField(max_length=100)
    namespace = models.CharField(max_length=253, blank=True)
    name = models.CharField(max_length=253)

    def __str__(self) -> str:
        return f"r{self.revision} {self.kind} {self.namespace}/{self.name}"

    @property
    def identity(self) -> tuple[str, str, str, str]:
        return self.group, self.kind, self.namespace, self.name
