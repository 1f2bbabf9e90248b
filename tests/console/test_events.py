"""console.events: every group and event of the console, one test per event."""

import asyncio
from typing import get_args, get_type_hints

from allocation.consumers import PageConsumer
from console import events
from console.channel_layer import LoopSafeChannelLayer
from scenarios.consumers import ScenarioConsumer


def _delivered(publication) -> dict:
    """What a member of the publication's group receives."""
    layer = LoopSafeChannelLayer()

    async def scenario():
        await layer.group_add(publication.group, "member.one")
        await layer.group_send(publication.group, dict(publication.event))
        return await asyncio.wait_for(layer.receive("member.one"), 10)

    return asyncio.run(scenario())


def _literal_type(payload) -> str:
    (name,) = get_args(get_type_hints(payload)["type"])
    return name


def test_every_event_type_has_one_payload_and_a_consumer_handler():
    payloads = {_literal_type(p): p for p in get_args(events.Event)}
    assert set(payloads) == set(events.EVENT_TYPES) == {"cluster.changed", "scenario.updated"}
    assert hasattr(PageConsumer, events.handler_name("cluster.changed"))
    assert hasattr(ScenarioConsumer, events.handler_name("scenario.updated"))


def test_cluster_changed():
    publication = events.cluster_changed(["Pod", "Node", "Pod"], 7)
    assert publication.group == events.CLUSTER_GROUP == "cluster"
    assert publication.event == {"type": "cluster.changed", "kinds": ["Node", "Pod"],
                                 "revision": 7}
    assert set(publication.event) == set(get_type_hints(events.ClusterChanged))
    assert _delivered(publication) == publication.event


def test_scenario_updated():
    publication = events.scenario_updated(12, 3)
    assert publication.group == events.scenario_group(12) == "scenario-12"
    assert publication.event == {"type": "scenario.updated", "id": 12, "position": 3,
                                 "origin": ""}
    assert set(publication.event) == set(get_type_hints(events.ScenarioUpdated))
    assert _delivered(publication) == publication.event
    from_page = events.scenario_updated(12, 4, origin="page-1")
    assert from_page.event["origin"] == "page-1"
    assert _delivered(from_page) == from_page.event


def test_a_broken_channel_layer_is_logged_not_raised(monkeypatch):
    class Broken:
        async def group_send(self, group, message):
            raise ConnectionError("redis is down")

    logged = []
    monkeypatch.setattr(events, "get_channel_layer", lambda: Broken())
    monkeypatch.setattr(events.log, "exception", lambda text, *args: logged.append(text % args))
    events.publish(events.cluster_changed(["Node"], 1))
    assert logged == ["could not publish cluster.changed to cluster"]
