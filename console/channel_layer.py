"""The in-memory channel layer, safe for sends from any thread or event loop.

Channels' ``InMemoryChannelLayer`` keeps one ``asyncio.Queue`` per channel and is only safe
inside one event loop. The console sends from other threads: the in-process worker and every
service called outside daphne's loop announce with ``async_to_sync(layer.group_send)``, which
runs on a loop of its own. The stock layer then puts the message on a queue that a consumer
awaits on daphne's loop, from another thread: the waiting consumer's future is resolved from
the wrong thread, and the loop may not notice until something else wakes it (a live page
waited seconds for an update).

:class:`LoopSafeChannelLayer` remembers which loop receives on each channel (the consumer's)
and hands every put on that channel to that loop with ``loop.call_soon_threadsafe``; a
channel's queue is only ever touched by its receiving loop once it has one. A channel whose
loop is closed (its consumer and loop are gone) is dropped. It is the default layer
(``console/env.py``, unset ``REDIS_URL``; docs/console.md, "Settings"); Redis replaces it
when several processes must share events (channels-redis keeps its state per loop).
"""

from __future__ import annotations

import asyncio
import threading
import time
from contextlib import suppress
from copy import deepcopy

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer

__all__ = ["LoopSafeChannelLayer"]


class LoopSafeChannelLayer(InMemoryChannelLayer):
    """``InMemoryChannelLayer`` whose queues are only touched by the loop receiving on them."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        # Guards channels, groups and the two maps below: they are shared by every thread.
        self._lock = threading.Lock()
        self._owners: dict[str, asyncio.AbstractEventLoop] = {}
        self._receivers: dict[str, int] = {}

    async def send(self, channel, message):
        """Put ``message`` on ``channel``, on the loop receiving on it if that is another loop.

        Raises:
            ChannelFull: the channel holds ``capacity`` messages already.
        """
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_channel_name(channel)
        assert "__asgi_channel__" not in message
        item = (time.time() + self.expiry, deepcopy(message))
        running = asyncio.get_running_loop()
        with self._lock:
            owner = self._owners.get(channel)
            if owner is None or owner is running:
                self._put(channel, item)
                return
            queue = self.channels.get(channel)
            if queue is not None and queue.full():
                raise ChannelFull(channel)
        try:
            owner.call_soon_threadsafe(self._put_quietly, channel, item)
        except RuntimeError:  # the receiving loop is closed: nobody will read this channel
            self._drop(channel)

    async def receive(self, channel):
        """The first message that arrives on ``channel``; this loop becomes its receiver."""
        self.require_valid_channel_name(channel)
        running = asyncio.get_running_loop()
        with self._lock:
            self._clean_expired_locked()
            self._owners[channel] = running
            self._receivers[channel] = self._receivers.get(channel, 0) + 1
            queue = self._queue(channel)
        try:
            _, message = await queue.get()
        finally:
            with self._lock:
                if queue.empty() and self.channels.get(channel) is queue:
                    self.channels.pop(channel, None)
                left = self._receivers.get(channel, 1) - 1
                if left:
                    self._receivers[channel] = left
                else:  # no coroutine waits on it: sends may put directly again
                    self._receivers.pop(channel, None)
                    self._owners.pop(channel, None)
        return message

    async def group_add(self, group, channel):
        self.require_valid_group_name(group)
        self.require_valid_channel_name(channel)
        with self._lock:
            self.groups.setdefault(group, {})[channel] = time.time()

    async def group_discard(self, group, channel):
        self.require_valid_channel_name(channel)
        self.require_valid_group_name(group)
        with self._lock:
            members = self.groups.get(group)
            if members:
                members.pop(channel, None)
                if not members:
                    self.groups.pop(group, None)

    async def group_send(self, group, message):
        """Send ``message`` to every channel of ``group``; full channels are skipped."""
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        with self._lock:
            self._clean_expired_locked()
            members = list(self.groups.get(group, {}))
        for channel in members:
            with suppress(ChannelFull):
                await self.send(channel, message)

    async def flush(self):
        with self._lock:
            self.channels = {}
            self.groups = {}
            self._owners = {}
            self._receivers = {}

    def _clean_expired(self):
        with self._lock:
            self._clean_expired_locked()

    def _clean_expired_locked(self) -> None:
        """Expire messages and memberships; queues of another loop are left to that loop."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        now = time.time()
        for channel, queue in list(self.channels.items()):
            owner = self._owners.get(channel)
            if owner is not None and owner is not running:
                continue
            while not queue.empty() and queue._queue[0][0] < now:
                queue.get_nowait()
                self._remove_from_groups(channel)
                if queue.empty():
                    self.channels.pop(channel, None)
        timeout = int(now) - self.group_expiry
        for members in self.groups.values():
            for name, joined in list(members.items()):
                if joined and joined < timeout:
                    members.pop(name, None)

    def _queue(self, channel: str) -> asyncio.Queue:
        queue = self.channels.get(channel)
        if queue is None:
            queue = self.channels[channel] = asyncio.Queue(maxsize=self.get_capacity(channel))
        return queue

    def _put(self, channel: str, item) -> None:
        """Put ``item`` (the lock is held; runs on the channel's loop or it has none)."""
        try:
            self._queue(channel).put_nowait(item)
        except asyncio.QueueFull:
            raise ChannelFull(channel) from None

    def _put_quietly(self, channel: str, item) -> None:
        """``_put`` on the receiving loop; a full channel drops the message (as group sends do)."""
        with self._lock, suppress(ChannelFull):
            self._put(channel, item)

    def _drop(self, channel: str) -> None:
        with self._lock:
            self.channels.pop(channel, None)
            self._owners.pop(channel, None)
            self._receivers.pop(channel, None)
            self._remove_from_groups(channel)
