"""The cluster's bookkeeping row and the worker lease."""

from __future__ import annotations

from django.db import models

__all__ = ["Cluster", "WorkerLease"]


class Cluster(models.Model):
    """The one row of bookkeeping for the stored cluster.

    ``revision`` grows by one with every committed write (services and worker), so readers
    can cache per revision and the worker can tell its input went stale. ``next_position``
    hands out document order; ``event_sequence`` numbers the worker's Events.
    """

    SINGLETON_ID = 1

    revision = models.BigIntegerField(default=0)
    next_position = models.BigIntegerField(default=1)
    event_sequence = models.BigIntegerField(default=0)
    token = models.CharField(
        max_length=32, blank=True,
        help_text="Random per write: tells two databases' equal revisions apart in caches.")
    reconciled_revision = models.BigIntegerField(
        default=-1, help_text="The revision the worker's last pass reached a fixed point at.")
    read_model_token = models.CharField(
        max_length=32, blank=True,
        help_text="Random per read-model sync: a worker that wrote the read model last "
                  "may compare with what it wrote instead of reading the rows.")
    changes_from = models.BigIntegerField(
        default=1, help_text="The first revision whose writes the change log (Change) "
                             "still lists; a worker behind it rebuilds its state.")
    timers_due_at = models.DateTimeField(
        null=True, blank=True,
        help_text="The latest controller timer a task reported due (a ProvisioningRequest "
                  "re-check, a back-off): the worker holding the lease passes again when "
                  "it moves.")

    def __str__(self) -> str:
        return f"cluster at revision {self.revision}"


class WorkerLease(models.Model):
    """Who may reconcile the baseline, until when: two workers never reconcile at once."""

    name = models.CharField(max_length=100, primary_key=True)
    holder = models.CharField(max_length=200, blank=True)
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} held by {self.holder or 'nobody'} until {self.expires_at}"
