from __future__ import annotations

import asyncio
import threading

from channels.layers import InMemoryChannelLayer

from allocation.worker import listen as listening
from console.events import CLUSTER_GROUP


class _Layer:
    """A channel layer shared by processes, as far as the listener can tell."""

    def __init__(self) -> None:
        self.groups: dict[str, set[str]] = {}
        self.joined = threading.Event()
        self.inbox: asyncio.Queue | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    async def new_channel(self) -> str:
        self.made = getattr(self, "made", 0) + 1
        self.inbox, self.loop = asyncio.Queue(), asyncio.get_running_loop()
        return "worker!1"

    async def group_add(self, group: str, channel: str) -> None:
        self.groups.setdefault(group, set()).add(channel)
        self.joined.set()

    async def receive(self, channel: str) -> dict:
        return await self.inbox.get()

    def send(self, message: dict) -> None:
        self.loop.call_soon_threadsafe(self.inbox.put_nowait, message)


def test_a_write_announced_by_another_process_wakes_the_worker(monkeypatch):
    # a renewal period longer than the loop's clock has run (it counts from boot): the
    # first join must not wait for it
    monkeypatch.setattr(listening, "_RENEW", 1e12)
    layer = _Layer()
    monkeypatch.setattr(listening, "get_channel_layer", lambda: layer)
    woken, stop = threading.Event(), threading.Event()
    thread = listening.listen(woken.set, stop)
    assert thread is not None
    assert layer.joined.wait(10)
    assert layer.groups[CLUSTER_GROUP] == {"worker!1"}
    layer.send({"type": "scenario.updated"})
    layer.send({"type": "cluster.changed", "kinds": ["Pod"], "revision": 7})
    assert woken.wait(10)
    stop.set()


def test_without_a_layer_across_processes_nothing_listens(monkeypatch):
    monkeypatch.setattr(listening, "get_channel_layer", lambda: InMemoryChannelLayer())
    assert listening.listen(lambda: None, threading.Event()) is None
    monkeypatch.setattr(listening, "get_channel_layer", lambda: None)
    assert listening.listen(lambda: None, threading.Event()) is None


def test_an_idle_read_timing_out_is_not_a_failure(monkeypatch):
    from redis.exceptions import TimeoutError as RedisTimeout

    layer = _Layer()
    reads = []

    async def receive(channel: str) -> dict:
        reads.append(channel)
        if len(reads) == 1:
            raise RedisTimeout("Timeout reading from 127.0.0.1:6379")
        return await layer.inbox.get()

    layer.receive = receive
    monkeypatch.setattr(listening, "get_channel_layer", lambda: layer)
    woken, stop = threading.Event(), threading.Event()
    listening.listen(woken.set, stop)
    assert layer.joined.wait(10)
    layer.send({"type": "cluster.changed", "kinds": ["Pod"], "revision": 8})
    assert woken.wait(10)
    assert len(reads) >= 2 and layer.made == 1  # read again on the same channel
    stop.set()
