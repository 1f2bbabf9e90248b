"""A what-if scenario: a named fork of the baseline that stores only its changes."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models

__all__ = ["Scenario"]


def _token() -> str:
    return secrets.token_urlsafe(18)


class Scenario(models.Model):
    """A user's fork of the stored cluster (the baseline) and the changes made to it.

    ``changes`` is the whole history, including undone changes; the first ``position`` of
    them are in effect (undo lowers it, redo raises it, a new change drops the undone
    tail). ``base_revision`` is the baseline revision the scenario was forked from (or last
    rebased on); promoting is refused when the baseline has moved on since. ``outcome`` is
    the last evaluation's comparison with the baseline, for lists and the API.
    """

    name = models.CharField(max_length=200)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              related_name="scenarios")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    base_revision = models.BigIntegerField(help_text="Baseline revision at fork or rebase.")
    forked_at = models.DateTimeField(help_text="When the scenario was forked or rebased.")
    changes = models.JSONField(default=list, blank=True)
    position = models.PositiveIntegerField(default=0,
                                           help_text="How many of the changes are in effect.")
    shared = models.BooleanField(default=False,
                                 help_text="Anyone signed in with the link may look at it.")
    share_token = models.CharField(max_length=32, unique=True, default=_token, editable=False)
    outcome = models.JSONField(null=True, blank=True)
    evaluated_revision = models.BigIntegerField(null=True, blank=True)
    evaluated_position = models.PositiveIntegerField(null=True, blank=True)
    evaluation_error = models.TextField(blank=True)
    promoted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-updated_at", "pk"]

    def __str__(self) -> str:
        return f"{self.name} ({self.owner})"

    @property
    def active_changes(self) -> list[dict]:
        return list(self.changes[: self.position])

    @property
    def can_undo(self) -> bool:
        return self.position > 0

    @property
    def can_redo(self) -> bool:
        return self.position < len(self.changes)
