"""allocation.services.broadcast: one cluster.changed message after each committed write."""

import asyncio

import pytest
from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, channel_layers, get_channel_layer
from django.db import transaction

from allocation.services import broadcast
from allocation.services.manifests import import_texts
from console.events import CLUSTER_GROUP as GROUP
from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def listener():
    """A channel in the ``cluster`` group of the channel layer (in-memory or Redis).

    With Redis, a layer instance of its own: a Redis layer's receive buffers belong to one
    event loop and each ``async_to_sync`` call runs in a new one (each test receives once).
    The in-memory layer is per instance, so there the services' own instance is used.
    """
    layer = get_channel_layer()
    if not isinstance(layer, InMemoryChannelLayer):
        layer = channel_layers.make_backend("default")
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(GROUP, channel)
    yield layer, channel
    async_to_sync(layer.group_discard)(GROUP, channel)
    async_to_sync(layer.flush)()


def _try_receive(layer, channel, wait: float = 0.3):
    """The next message on ``channel``, or None if none arrives (in-memory or Redis)."""

    async def receive():
        try:
            return await asyncio.wait_for(layer.receive(channel), wait)
        except TimeoutError:
            return None

    return async_to_sync(receive)()


def test_a_committed_write_is_announced_after_commit(listener,
                                                      django_capture_on_commit_callbacks):
    layer, channel = listener
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        import_texts([("a.yaml", f.to_yaml([f.node("n1"), f.resource_class()]))])
    assert len(callbacks) == 1  # nothing is sent until the transaction commits
    callbacks[0]()
    message = _try_receive(layer, channel, wait=5)
    assert message == {"type": "cluster.changed", "kinds": ["Node", "ResourceClass"],
                       "revision": 1}


def test_a_rolled_back_write_announces_nothing(listener, django_capture_on_commit_callbacks):
    layer, channel = listener
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        try:
            with transaction.atomic():
                import_texts([("a.yaml", f.to_yaml([f.node("n1")]))])
                raise RuntimeError("abort")
        except RuntimeError:
            pass
    assert callbacks == [] and _try_receive(layer, channel) is None


def test_an_unchanged_import_is_not_announced(listener, django_capture_on_commit_callbacks):
    text = f.to_yaml([f.node("n1")])
    import_texts([("a.yaml", text)])
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        import_texts([("a.yaml", text)])
    assert callbacks == []


def test_subscribers_hear_every_committed_write(django_capture_on_commit_callbacks):
    heard = []
    broadcast.subscribe(heard.append)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            import_texts([("a.yaml", f.to_yaml([f.node("n1")]))])
        with django_capture_on_commit_callbacks(execute=True):
            try:
                with transaction.atomic():
                    import_texts([("b.yaml", f.to_yaml([f.node("n2")]))])
                    raise RuntimeError("abort")
            except RuntimeError:
                pass
    finally:
        broadcast.unsubscribe(heard.append)
    assert heard == [{"type": "cluster.changed", "kinds": ["Node"], "revision": 1}]


def test_the_in_process_worker_is_woken_through_its_subscription():
    from allocation.worker import runtime

    assert runtime.wake_on_commit in broadcast._hooks  # subscribed by allocation.apps
