"""Telling everyone the stored cluster changed, once the change is committed.

After every committed write, ``cluster.changed`` (``console.events``) goes to the
channel-layer group ``cluster``, where consumers re-render what they show, and every hook
subscribed with :func:`subscribe` is called with the same event: the in-process worker
subscribes (``allocation.apps``) to wake at once. Services never import the worker. It all
happens in ``transaction.on_commit``, so a rolled-back write announces nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from django.db import transaction

from console.events import ClusterChanged, cluster_changed, publish

__all__ = ["announce_after_commit", "send_now", "subscribe", "unsubscribe"]

log = logging.getLogger(__name__)

CommitHook = Callable[[ClusterChanged], None]
_hooks: list[CommitHook] = []


def subscribe(hook: CommitHook) -> None:
    """Call ``hook(event)`` after every committed write of the cluster (once per hook)."""
    if hook not in _hooks:
        _hooks.append(hook)


def unsubscribe(hook: CommitHook) -> None:
    if hook in _hooks:
        _hooks.remove(hook)


def send_now(kinds: Iterable[str], revision: int) -> None:
    """Announce at once (callers normally want :func:`announce_after_commit`)."""
    publication = cluster_changed(kinds, revision)
    publish(publication)
    for hook in list(_hooks):
        try:
            hook(publication.event)
        except Exception:  # a failing subscriber must not fail a committed write
            log.exception("commit hook %r failed for revision %s", hook, revision)


def announce_after_commit(kinds: Iterable[str], revision: int) -> None:
    """Announce when the current transaction commits (at once outside one)."""
    kinds = sorted(set(kinds))
    transaction.on_commit(lambda: send_now(kinds, revision))
