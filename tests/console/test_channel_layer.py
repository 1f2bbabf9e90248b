"""console.channel_layer: a channel's queue is only touched by the loop receiving on it."""

import asyncio
import threading

import pytest
from asgiref.sync import async_to_sync
from channels.exceptions import ChannelFull

from console.channel_layer import LoopSafeChannelLayer

WAIT = 10.0  # a generous bound on a hang, not a timing


class _Receiver:
    """A loop in its own thread (like daphne's) with one coroutine receiving on a channel."""

    def __init__(self, layer: LoopSafeChannelLayer, channel: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.future = asyncio.run_coroutine_threadsafe(layer.receive(channel), self.loop)

    def wait_until_receiving(self, layer, channel) -> None:
        for _ in range(int(WAIT * 100)):
            if layer._owners.get(channel) is self.loop:
                return
            threading.Event().wait(0.01)
        raise AssertionError("the receiver never started")

    def close(self) -> None:
        self.future.cancel()  # the receiving task is cancelled on its loop, which then stops
        self.loop.call_soon_threadsafe(self.loop.call_soon, self.loop.stop)
        self.thread.join(WAIT)
        self.loop.close()


@pytest.fixture
def layer():
    return LoopSafeChannelLayer()


def test_a_send_from_another_thread_is_put_on_the_receivers_loop(layer, monkeypatch):
    puts = []
    original = layer._put
    monkeypatch.setattr(layer, "_put", lambda channel, item: (
        puts.append(threading.current_thread()), original(channel, item))[1])
    receiver = _Receiver(layer, "page.one")
    try:
        receiver.wait_until_receiving(layer, "page.one")
        async_to_sync(layer.group_add)("cluster", "page.one")
        async_to_sync(layer.group_send)("cluster", {"type": "cluster.changed", "revision": 3})
        assert receiver.future.result(WAIT) == {"type": "cluster.changed", "revision": 3}
        assert puts == [receiver.thread]
    finally:
        receiver.close()


def test_sends_before_anyone_receives_wait_in_the_queue(layer):
    async def scenario():
        await layer.send("page.two", {"type": "a"})
        await layer.send("page.two", {"type": "b"})
        return [await layer.receive("page.two"), await layer.receive("page.two")]

    assert asyncio.run(scenario()) == [{"type": "a"}, {"type": "b"}]
    assert layer.channels == {} and layer._owners == {}


def test_a_channel_whose_loop_is_closed_is_dropped(layer):
    gone = asyncio.new_event_loop()
    gone.close()  # a consumer's loop that ended while it was receiving
    layer._owners["page.gone"] = gone
    async_to_sync(layer.group_add)("cluster", "page.gone")
    async_to_sync(layer.group_send)("cluster", {"type": "cluster.changed"})
    assert "page.gone" not in layer.groups.get("cluster", {})
    assert "page.gone" not in layer._owners


def test_a_full_channel_refuses_a_direct_send_and_is_skipped_by_a_group_send():
    layer = LoopSafeChannelLayer(capacity=1)

    async def scenario():
        await layer.group_add("cluster", "page.full")
        await layer.send("page.full", {"type": "first"})
        with pytest.raises(ChannelFull):
            await layer.send("page.full", {"type": "second"})
        await layer.group_send("cluster", {"type": "third"})  # skipped, not raised
        return await layer.receive("page.full")

    assert asyncio.run(scenario()) == {"type": "first"}


def test_flush_forgets_everything(layer):
    async def scenario():
        await layer.group_add("cluster", "page.x")
        await layer.send("page.x", {"type": "a"})
        await layer.flush()

    asyncio.run(scenario())
    assert layer.channels == {} and layer.groups == {}
