"""The list pages' tables (django-tables2): sortable columns, links, one page of rows.

Each table reads read-model rows (``allocation/models/read_model.py``) or stored Events;
sorting and paging happen in the database (``?sort=``, ``?page=``), so a page costs the
same at 100 and at 5,000 nodes (docs/console-pages.md, "Lists").
"""

from __future__ import annotations

import django_tables2 as tables
from django.utils.html import format_html

from allocation.models import ClaimSummary, Event, NodeSummary, PodSummary
from allocation.presenters.common import EventRow, cpu_text, event_rows, object_url
from allocation.presenters.status import POD_STATUS_STATES
from allocation.templatetags.status import status_badge

__all__ = ["NodeTable", "PodTable", "ClaimTable", "EventTable", "LIST_TABLES", "PER_PAGE"]

PER_PAGE = 50

_ATTRS = {"class": "grid sortable"}


def _link(url: str | None, text: str) -> str:
    return format_html('<a href="{}">{}</a>', url, text) if url else text


def _items(column: str) -> str:
    """A ``,a,b,`` list column for reading: ``a, b``."""
    return ", ".join(v for v in column.split(",") if v)


class NodeTable(tables.Table):
    name = tables.Column(verbose_name="Node", order_by=("name",))
    node_group = tables.Column(verbose_name="Node group")
    status = tables.Column(verbose_name="Status", accessor="unschedulable",
                           order_by=("unschedulable",))
    pods = tables.Column(verbose_name="Pods")
    cpu = tables.Column(verbose_name="CPU used", accessor="cpu_used_milli")
    devices = tables.Column(verbose_name="Devices in use", accessor="devices_used")
    in_use_percent = tables.Column(verbose_name="In use %")
    drivers = tables.Column(verbose_name="Drivers", orderable=False)

    class Meta:
        model = NodeSummary
        fields = ()
        sequence = ("name", "node_group", "status", "pods", "cpu", "devices", "in_use_percent",
                    "drivers")
        attrs = _ATTRS
        empty_text = "No node matches."

    def render_name(self, value: str) -> str:
        return _link(object_url("Node", None, value), value)

    def render_status(self, value: bool) -> str:
        return "Unschedulable" if value else "Schedulable"

    def render_cpu(self, record: NodeSummary) -> str:
        return f"{cpu_text(record.cpu_used_milli)} / {cpu_text(record.cpu_total_milli)}"

    def render_devices(self, record: NodeSummary) -> str:
        return f"{record.devices_used}/{record.devices_total}"

    def render_drivers(self, value: str) -> str:
        return _items(value)


class PodTable(tables.Table):
    name = tables.Column(verbose_name="Pod", order_by=("namespace", "name"))
    status = tables.Column(verbose_name="Status")
    node = tables.Column(verbose_name="Node")
    node_group = tables.Column(verbose_name="Node group")
    reason = tables.Column(verbose_name="Pending reason")

    class Meta:
        model = PodSummary
        fields = ()
        sequence = ("name", "status", "node", "node_group", "reason")
        attrs = _ATTRS
        empty_text = "No pod matches."

    def render_name(self, record: PodSummary) -> str:
        return _link(object_url("Pod", record.namespace, record.name),
                     f"{record.namespace}/{record.name}")

    def render_node(self, value: str) -> str:
        return _link(object_url("Node", None, value), value)

    def render_status(self, value: str) -> str:
        """The one status vocabulary's badge (a scheduled pod is *bound*); the filter keeps
        the column's words."""
        return status_badge("pod", POD_STATUS_STATES[value])


class ClaimTable(tables.Table):
    name = tables.Column(verbose_name="Claim", order_by=("namespace", "name"))
    state = tables.Column(verbose_name="Status")
    classes = tables.Column(verbose_name="Class")
    node = tables.Column(verbose_name="Node")
    held = tables.Column(verbose_name="Held")
    summary = tables.Column(verbose_name="Allocation", orderable=False)

    class Meta:
        model = ClaimSummary
        fields = ()
        sequence = ("name", "state", "classes", "node", "held", "summary")
        attrs = _ATTRS
        empty_text = "No claim matches."

    def render_name(self, record: ClaimSummary) -> str:
        return _link(object_url("ResourceClaim", record.namespace, record.name),
                     f"{record.namespace}/{record.name}")

    def render_state(self, value: str) -> str:
        return status_badge("claim", value.lower())

    def render_classes(self, value: str) -> str:
        return _items(value)

    def render_node(self, value: str) -> str:
        return _link(object_url("Node", None, value), value)


class EventTable(tables.Table):
    """Event series as ``kubectl get events`` shows them: last seen (a repeat moves the series
    to the end of the order, so ``position`` sorts by it), type, reason, object, message,
    count and first seen (docs/console.md, "Events")."""

    position = tables.Column(verbose_name="Last seen")
    type = tables.Column(verbose_name="Type")
    reason = tables.Column(verbose_name="Reason")
    involved_name = tables.Column(verbose_name="Object",
                                  order_by=("involved_kind", "involved_namespace",
                                            "involved_name"))
    message = tables.Column(verbose_name="Message", accessor="document", orderable=False)
    count = tables.Column(verbose_name="Count")
    first_seen = tables.Column(verbose_name="First seen", accessor="document", orderable=False)

    class Meta:
        model = Event
        fields = ()
        sequence = ("position", "type", "reason", "involved_name", "message", "count",
                    "first_seen")
        attrs = _ATTRS
        empty_text = "No Event matches."

    def _row(self, record: Event) -> EventRow:
        """The series as every other Events table reads it (decoded once per record)."""
        row = getattr(record, "_event_row", None)
        if row is None:
            row = record._event_row = event_rows([record.manifest])[0]
        return row

    def render_position(self, record: Event) -> str:
        return self._row(record).time or "-"

    def render_involved_name(self, record: Event) -> str:
        text = f"{record.involved_kind} {record.involved_namespace + '/' if record.involved_namespace else ''}{record.involved_name}"  # noqa: E501
        return _link(object_url(record.involved_kind, record.involved_namespace or None,
                                record.involved_name), text)

    def render_message(self, record: Event) -> str:
        return self._row(record).message or str(record.manifest.get("note") or "")

    def render_first_seen(self, record: Event) -> str:
        return self._row(record).first_time or "-"


LIST_TABLES: dict[str, type[tables.Table]] = {
    "nodes": NodeTable, "pods": PodTable, "claims": ClaimTable, "events": EventTable}
"""The table of each list, by the list's name (the keys of ``filters.LIST_FILTERS``)."""
