"""Telling everyone the stored cluster changed, once the change is committed.

The one event is ``{"type": "cluster.changed", "kinds": [...], "revision": n}`` sent to the
channel-layer group ``cluster``; consumers re-render what they show. It is sent from
``transaction.on_commit``, so a rolled-back write never announces anything. The in-process
worker (if any) is woken at the same time.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

__all__ = ["GROUP", "EVENT_TYPE", "announce_after_commit", "send_now"]

GROUP = "cluster"
EVENT_TYPE = "cluster.changed"

log = logging.getLogger(__name__)


def send_now(kinds: Iterable[str], revision: int) -> None:
    """Send the event at once (callers normally want :func:`announce_after_commit`)."""
    layer = get_channel_layer()
    message = {"type": EVENT_TYPE, "kinds": sorted(set(kinds)), "revision": revision}
    if layer is not None:
        try:
            async_to_sync(layer.group_send)(GROUP, message)
        except Exception:  # a broken channel layer must not fail a committed write
            log.exception("could not announce revision %s", revision)
    from allocation.worker import runtime

    runtime.notify()


def announce_after_commit(kinds: Iterable[str], revision: int) -> None:
    """Send the event when the current transaction commits (at once outside one)."""
    kinds = sorted(set(kinds))
    transaction.on_commit(lambda: send_now(kinds, revision))
