"""Pieces every page shares: object links, Events and conditions as rows, number formatting."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from django.conf import settings
from django.urls import NoReverseMatch, get_script_prefix, get_urlconf, reverse
from django.utils.http import RFC3986_SUBDELIMS

__all__ = ["ConditionView", "EventRow", "object_url", "event_rows", "events_about",
           "condition_views", "bytes_text", "cpu_text", "percent"]

# The page each kind links to, and whether its URL carries a namespace. A PodSchedulingContext
# is named after its pod, so it links to the pod's page (where its timeline is shown).
_ROUTES: dict[str, tuple[str, bool]] = {
    "Node": ("allocation:node", False),
    "Pod": ("allocation:pod", True),
    "ResourceClaim": ("allocation:claim", True),
    "ProvisioningRequest": ("allocation:provisioning_request", True),
    "PodSchedulingContext": ("allocation:pod", True),
    "DeviceClass": ("allocation:device_class", False),
    "ResourceSlice": ("allocation:resource_slice", False),
}


_MARKS = ("~:@0~", "~:@1~")
"""Stand-ins for a route's arguments: left as they are by a URL's quoting and taken by a
``str`` converter (``[^/]+``), not by a slug or a number."""
_SAFE = RFC3986_SUBDELIMS + "/~:@"  # what ``reverse`` leaves unquoted (django/urls/resolvers.py)
_links: dict[tuple, str | None] = {}


def object_url(kind: str, namespace: str | None, name: str) -> str | None:
    """The console page of an object, or None for kinds without a page.

    ``reverse`` once per route (and script prefix and URL configuration), then the
    arguments put in, quoted as ``reverse`` quotes them: a page links hundreds of objects
    (the scenario page's devices and their claims, docs/scenarios.md), at tens of
    microseconds a ``reverse``. An argument the route might not take as a plain string
    (empty, with a ``/``) is left to ``reverse``.
    """
    route = _ROUTES.get(kind)
    if route is None or not name:
        return None
    view, namespaced = route
    args = (namespace or "default", name) if namespaced else (name,)
    pattern = _link(view, len(args))
    if pattern is None or any(not a or "/" in a or "~:@" in a for a in args):
        return reverse(view, args=args)
    for mark, arg in zip(_MARKS, args, strict=False):
        pattern = pattern.replace(mark, quote(arg, safe=_SAFE))
    return pattern


def _link(view: str, count: int) -> str | None:
    """``view``'s URL with :data:`_MARKS` for its ``count`` arguments, each once, or None
    when its route does not take them as plain strings."""
    key = (view, count, get_script_prefix(), get_urlconf() or settings.ROOT_URLCONF)
    if key not in _links:
        try:
            url = reverse(view, args=_MARKS[:count])
        except NoReverseMatch:
            url = None
        if url is not None and any(url.count(m) != 1 for m in _MARKS[:count]):
            url = None
        _links[key] = url
    return _links[key]


@dataclass(frozen=True, slots=True)
class ConditionView:
    """One status condition as a person reads it."""

    type: str
    status: str
    reason: str
    message: str
    since: str

    @property
    def good(self) -> bool:
        """True conditions are good news except Failed (and kin)."""
        positive = self.status == "True"
        return not positive if self.type in ("Failed", "Unschedulable") else positive


def condition_views(conditions: list[dict]) -> list[ConditionView]:
    return [ConditionView(str(c.get("type", "")), str(c.get("status", "")),
                          str(c.get("reason") or ""), str(c.get("message") or ""),
                          str(c.get("lastTransitionTime") or "")) for c in conditions]


@dataclass(frozen=True, slots=True)
class EventRow:
    """One Kubernetes Event series: when last and first seen, what about, what happened, and
    how often (``count``), as ``kubectl get events`` shows it (docs/console.md, "Events")."""

    time: str
    type: str
    reason: str
    message: str
    kind: str
    namespace: str | None
    name: str
    component: str
    url: str | None
    count: int = 1
    first_time: str = ""

    @property
    def subject(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else \
            f"{self.kind} {self.name}"

    @property
    def warning(self) -> bool:
        return self.type == "Warning"


def _row(event: dict) -> EventRow:
    involved = event.get("involvedObject") or {}
    kind, name = str(involved.get("kind", "")), str(involved.get("name", ""))
    namespace = involved.get("namespace")
    component = (event.get("source") or {}).get("component") or event.get(
        "reportingComponent") or ""
    count = event.get("count")
    first = str(event.get("firstTimestamp") or event.get("eventTime") or "")
    return EventRow(str(event.get("lastTimestamp") or first),
                    str(event.get("type", "")), str(event.get("reason", "")),
                    str(event.get("message", "")), kind, namespace, name, str(component),
                    object_url(kind, namespace, name),
                    count if isinstance(count, int) and count > 0 else 1, first)


def event_rows(events: list[dict]) -> list[EventRow]:
    return [_row(e) for e in events]


def events_about(events: list[dict], kind: str, namespace: str | None, name: str
                 ) -> list[EventRow]:
    """Events whose involved object is the given one, oldest first."""
    return [_row(e) for e in events if (e.get("involvedObject") or {}).get("kind") == kind
            and (e.get("involvedObject") or {}).get("name") == name
            and (e.get("involvedObject") or {}).get("namespace") == namespace]


def bytes_text(value: int | None) -> str:
    """Bytes in the largest binary unit that keeps the number at least 1 (``32Gi``)."""
    if value is None:
        return "-"
    for unit, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if value >= size:
            number = value / size
            return f"{number:.0f}{unit}" if number == int(number) else f"{number:.1f}{unit}"
    return str(value)


def cpu_text(milli: int | None) -> str:
    if milli is None:
        return "-"
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def percent(part: int, whole: int) -> int:
    return round(100 * part / whole) if whole else 0
