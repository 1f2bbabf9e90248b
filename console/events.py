"""Every channel-layer group and event of the console, with its payload.

Services publish these after a commit; consumers join the groups and handle the events
(Channels calls the method named after the type with dots as underscores:
``cluster.changed`` -> ``cluster_changed``). A new event is declared here, once: its type
name in :data:`EventType`, its payload as a ``TypedDict``, its group and a constructor
(docs/console-pages.md, "Live updates").

* ``cluster.changed`` to ``cluster``: the kinds written and the new revision; sent by
  ``allocation.services.broadcast``, handled by ``allocation.consumers.PageConsumer``.
* ``scenario.updated`` to ``scenario-<id>``: the scenario, its position in its history and
  the page whose request made the change (``origin``; empty when no page did), which
  already has the new body from its answer; sent by ``scenarios.services``, handled by
  ``scenarios.consumers.ScenarioConsumer``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Literal, NamedTuple, TypedDict, get_args

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

__all__ = [
    "EventType", "EVENT_TYPES", "CLUSTER_GROUP", "ClusterChanged", "ScenarioUpdated", "Event",
    "Publication", "cluster_changed", "scenario_group", "scenario_updated", "handler_name",
    "publish",
]

log = logging.getLogger(__name__)

EventType = Literal["cluster.changed", "scenario.updated"]
EVENT_TYPES: tuple[str, ...] = get_args(EventType)

CLUSTER_GROUP = "cluster"
"""Every open live page of the stored cluster (``allocation.consumers.PageConsumer``)."""


class ClusterChanged(TypedDict):
    """The stored cluster changed: a committed write of ``kinds`` made ``revision``."""

    type: Literal["cluster.changed"]
    kinds: list[str]
    revision: int


class ScenarioUpdated(TypedDict):
    """A scenario changed (a change, undo, redo, rebase, refresh, sharing)."""

    type: Literal["scenario.updated"]
    id: int
    position: int
    origin: str
    """The page (its own random id) whose request made the change, or ``""``: that page's
    answer carries the new body, so its socket needs no second one."""


Event = ClusterChanged | ScenarioUpdated


class Publication(NamedTuple):
    """One event and the group it goes to."""

    group: str
    event: Event


def scenario_group(scenario_id: int) -> str:
    """The group of one scenario's open pages (``scenarios.consumers.ScenarioConsumer``)."""
    return f"scenario-{scenario_id}"


def cluster_changed(kinds: Iterable[str], revision: int) -> Publication:
    """``cluster.changed`` for a write of ``kinds`` (sorted, once each) at ``revision``."""
    event: ClusterChanged = {"type": "cluster.changed", "kinds": sorted(set(kinds)),
                             "revision": revision}
    return Publication(CLUSTER_GROUP, event)


def scenario_updated(scenario_id: int, position: int, origin: str = "") -> Publication:
    """``scenario.updated`` for scenario ``scenario_id`` now at ``position``, changed by a
    request of page ``origin`` (``""``: by no page, such as a refresh or the API)."""
    event: ScenarioUpdated = {"type": "scenario.updated", "id": scenario_id,
                              "position": position, "origin": origin}
    return Publication(scenario_group(scenario_id), event)


def handler_name(event_type: EventType) -> str:
    """The consumer method Channels calls for ``event_type``."""
    return event_type.replace(".", "_")


def publish(publication: Publication) -> None:
    """Send ``publication`` on the channel layer now (services call it after commit).

    A broken channel layer is logged, never raised: the write it announces is committed.
    """
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(publication.group, dict(publication.event))
    except Exception:
        log.exception("could not publish %s to %s", publication.event["type"],
                      publication.group)
