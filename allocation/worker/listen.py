"""Waking a worker in its own process when another process commits a write (scale-out).

Every write announces ``cluster.changed`` to the group every live page listens to, after
its commit (``console/events.py``). A worker in the web process is woken by the services'
commit hook (``runtime.wake_on_commit``); a worker in a process of its own
(``manage.py worker``) would only see the write at its next poll of the stored revision
(``DRA_WORKER_POLL_SECONDS``, a second by default). With a channel layer that crosses
processes (Redis, ``REDIS_URL``), :func:`listen` subscribes the worker to that group, so its
pass starts as soon as the write is committed (docs/console.md, "Scale-out").
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

from channels.layers import InMemoryChannelLayer, get_channel_layer

from console.events import CLUSTER_GROUP

__all__ = ["listen"]

try:  # the Redis layer's client (installed with channels-redis, the "scale" extra)
    from redis.exceptions import TimeoutError as _IDLE
except ImportError:  # pragma: no cover - without it no layer crosses processes
    _IDLE = TimeoutError

log = logging.getLogger(__name__)

_RETRY = 1.0
"""Seconds before listening again after the channel layer failed."""

_RENEW = 3600.0
"""Seconds between renewals of the group membership (the layer expires it after a day)."""


def listen(wake: Callable[[], None], stop: threading.Event) -> threading.Thread | None:
    """Call ``wake()`` on every ``cluster.changed`` message until ``stop`` is set, from a
    daemon thread (it ends with the process; ``stop`` ends it at its next message).

    Returns:
        The thread, or None when the channel layer does not cross processes (none, or the
        in-memory one: the commit hook already wakes a worker in the writing process).
    """
    layer = get_channel_layer()
    if layer is None or isinstance(layer, InMemoryChannelLayer):
        return None
    thread = threading.Thread(target=lambda: asyncio.run(_listen(layer, wake, stop)),
                              name="worker-listen", daemon=True)
    thread.start()
    return thread


async def _listen(layer, wake: Callable[[], None], stop: threading.Event) -> None:
    # None until joined: the loop's clock counts from the machine's boot, so a worker
    # started within _RENEW of boot would otherwise never join
    channel, joined = None, None
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        try:
            if channel is None:
                channel = await layer.new_channel()
            if joined is None or loop.time() - joined > _RENEW:
                await layer.group_add(CLUSTER_GROUP, channel)
                joined = loop.time()
            # no timeout of ours around it: cancelling a blocked read of the Redis layer
            # leaves its connection unusable (the layer itself polls in short blocks)
            message = await layer.receive(channel)
        except _IDLE:
            continue  # a blocked read that saw nothing for a while (redis-py's timeout)
        except Exception as error:  # noqa: BLE001 - Redis away: the revision poll works
            log.warning("worker: cannot hear writes on the channel layer (%s); polling "
                        "the revision until it is back", error)
            channel, joined = None, None
            await asyncio.sleep(_RETRY)
            continue
        if message.get("type") == "cluster.changed":
            wake()
