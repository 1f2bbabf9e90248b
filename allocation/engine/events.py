"""The virtual clock and the Events the controllers record, in the order they happen."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from allocation.engine import kinds
from allocation.engine.constants import SCHEDULER_COMPONENT

__all__ = ["VirtualClock", "EventRecorder", "DEFAULT_START", "format_time", "parse_time",
           "parse_duration", "EARLIEST", "LATEST", "MAX_DURATION", "series_key", "fold"]

DEFAULT_START = datetime(2025, 1, 1, tzinfo=UTC)
#: The times the virtual clock may start at or read from an object. The clock moves on by
#: at most two MAX_DURATIONs (``--advance``, then a timer such as ValidUntilSeconds), so
#: whatever it computes stays far inside what a datetime represents (year 9999).
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
#: The longest duration accepted anywhere (``--advance``, ValidUntilSeconds): 100 years.
MAX_DURATION = timedelta(days=36500)
_EVENT_VERSION = kinds.EVENT.preferred_version


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """An RFC 3339 timestamp (``2025-01-01T00:00:00Z``)."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is not an RFC 3339 time such as 2025-01-01T00:00:00Z")\
            from None
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone; add Z for UTC")
    try:
        moment = moment.astimezone(UTC)
    except OverflowError:
        moment = EARLIEST - timedelta(days=1)  # an offset pushed it out of range
    if not EARLIEST <= moment < LATEST:
        raise ValueError(f"{text!r} is out of range: times from {format_time(EARLIEST)} to "
                         f"before {format_time(LATEST)} are accepted")
    return moment


def parse_duration(text: str) -> timedelta:
    """A duration such as ``90s``, ``20m``, ``8h``, ``1h30m`` or ``2d``."""
    import re

    units = {"d": 86400, "h": 3600, "m": 60, "s": 1}
    parts = re.findall(r"(\d+(?:\.\d+)?)([dhms])", text.strip())
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        raise ValueError(f"{text!r} is not a duration such as 90s, 20m, 8h or 1h30m")
    seconds = sum(float(n) * units[u] for n, u in parts)
    if seconds > MAX_DURATION.total_seconds():
        raise ValueError(f"{text!r} is longer than the longest duration accepted, "
                         f"{MAX_DURATION.days}d (100 years)")
    return timedelta(seconds=seconds)


def series_key(event: dict) -> tuple[str, str, str, str, str, str]:
    """What makes Events one series: the object they are about, their type and reason, and
    who reports them.

    Kubernetes keeps the repeats of one reason about one object as one Event with a
    ``count`` and first and last timestamps (client-go's event correlator; ``kubectl get
    events`` shows LAST SEEN and COUNT); the console stores Events that way
    (docs/console.md, "Events"). The message is not part of the key: a series shows its
    latest message.

    Returns:
        (kind, namespace or "", name, type, reason, reporting component).
    """
    involved = event.get("involvedObject") or event.get("regarding") or {}
    if not isinstance(involved, dict):
        involved = {}
    source = event.get("source") if isinstance(event.get("source"), dict) else {}

    def text(value) -> str:
        return value if isinstance(value, str) else ""

    return (text(involved.get("kind")), text(involved.get("namespace")),
            text(involved.get("name")), text(event.get("type")), text(event.get("reason")),
            text(source.get("component")) or text(event.get("reportingComponent")))


def fold(earlier: dict, later: dict) -> dict:
    """One Event for two of one series: ``earlier``'s name and first time, ``later``'s
    message and last time, the counts added up.

    Returns:
        A new Event document (neither argument is changed).
    """
    folded = {**later, "metadata": earlier.get("metadata", later.get("metadata"))}
    first = earlier.get("firstTimestamp") or earlier.get("eventTime")
    if first:
        folded["firstTimestamp"] = first
    folded["count"] = _count(earlier) + _count(later)
    return folded


def _count(event: dict) -> int:
    count = event.get("count")
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 1


class VirtualClock:
    """Simulated time: it only moves when the simulation moves it."""

    def __init__(self, start: datetime = DEFAULT_START) -> None:
        self.now = start
        self._stamped: tuple[datetime, str] | None = None

    def advance_to(self, moment: datetime) -> None:
        if moment > self.now:
            self.now = moment

    def stamp(self) -> str:
        """``now`` as an RFC 3339 text; formatted once per moment (every condition and
        Event of a pass asks for it)."""
        stamped = self._stamped
        if stamped is None or stamped[0] is not self.now:
            stamped = self._stamped = (self.now, format_time(self.now))
        return stamped[1]


class EventRecorder:
    """Kubernetes ``v1`` Events with deterministic names and virtual timestamps."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.items: list[dict[str, Any]] = []
        self._seq = 0

    def adopt(self, events) -> None:
        for event in events:
            self.items.append(event.to_manifest())

    def record(self, obj, type_: str, reason: str, message: str,
               component: str = SCHEDULER_COMPONENT) -> dict:
        self._seq += 1
        stamp = self.clock.stamp()
        kind, namespace, name = obj.key  # an Event is recorded per claim and pod placed
        uid = obj.meta.uid
        involved = {"apiVersion": obj.api_version, "kind": kind, "name": name}
        if namespace:
            involved["namespace"] = namespace
        if uid:
            involved["uid"] = uid
        event = {
            "apiVersion": _EVENT_VERSION, "kind": "Event",
            "metadata": {"name": f"{name}.{self._seq:08d}",
                         "namespace": namespace or "default"},
            "involvedObject": involved, "type": type_, "reason": reason, "message": message,
            "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1,
            "source": {"component": component}, "reportingComponent": component,
        }
        self.items.append(event)
        return event

    def for_object(self, kind: str, namespace: str | None, name: str) -> list[dict]:
        return [e for e in self.items if e["involvedObject"].get("kind") == kind
                and e["involvedObject"].get("name") == name
                and e["involvedObject"].get("namespace") == namespace]
