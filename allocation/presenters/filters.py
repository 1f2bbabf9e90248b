"""Search and filters of the lists: one django-filter FilterSet per list, for page and API.

Nodes, pods and claims are filtered on the read model (``allocation/models/read_model.py``),
Events on their stored rows. The list pages (``allocation/views/lists.py``) and the REST
API (``allocation/api/views.py``) use the same FilterSet, so a filter means the same in
both (docs/console-pages.md, "Lists"). Parameters: ``q`` searches names; the others match
a column exactly (``label`` takes ``key=value`` or a bare ``key``; several values in one
column match when one of them is equal).
"""

from __future__ import annotations

import django_filters
from django.db.models import Q, QuerySet

from allocation.models import ClaimSummary, Event, NodeSummary, PodSummary

__all__ = ["NodeFilter", "PodFilter", "ClaimFilter", "EventFilter", "LIST_FILTERS",
           "POD_STATUSES", "CLAIM_STATUSES"]

POD_STATUSES = ("Pending", "Unschedulable", "SchedulingGated", "Scheduled", "Terminating",
                "Succeeded", "Failed")
"""Every value of :func:`allocation.models.pod.pod_status`."""
CLAIM_STATUSES = ("Pending", "Allocated", "Reserved", "DeallocationRequested")
"""Every value of :func:`allocation.models.claim.claim_status`."""


def _member(column: str):
    """A filter method matching one value of a ``,a,b,`` list column."""

    def method(queryset: QuerySet, _name: str, value: str) -> QuerySet:
        return queryset.filter(**{f"{column}__contains": f",{value},"}) if value else queryset

    return method


def _label(queryset: QuerySet, _name: str, value: str) -> QuerySet:
    """``key=value`` matches that label; a bare ``key`` any value of it."""
    if not value:
        return queryset
    if "=" in value:
        return queryset.filter(labels__contains=f",{value},")
    return queryset.filter(labels__contains=f",{value}=")


def _choices(values) -> list[tuple[str, str]]:
    return [(v, v) for v in values]


class NodeFilter(django_filters.FilterSet):
    """Nodes by name (``q`` searches, ``node`` is exact), label, node group, driver, status."""

    q = django_filters.CharFilter(field_name="name", lookup_expr="icontains", label="Search")
    node = django_filters.CharFilter(field_name="name", label="Node")
    label = django_filters.CharFilter(method=_label, label="Label")
    node_group = django_filters.CharFilter(field_name="node_group", label="Node group")
    driver = django_filters.CharFilter(method=_member("drivers"), label="Driver")
    status = django_filters.ChoiceFilter(
        method="filter_status", label="Status",
        choices=_choices(("Schedulable", "Unschedulable")))

    class Meta:
        model = NodeSummary
        fields: list[str] = []

    def filter_status(self, queryset: QuerySet, _name: str, value: str) -> QuerySet:
        return queryset.filter(unschedulable=value == "Unschedulable") if value else queryset


class PodFilter(django_filters.FilterSet):
    """Pods by name, namespace, label, node, node group, status and pending reason."""

    q = django_filters.CharFilter(field_name="name", lookup_expr="icontains", label="Search")
    namespace = django_filters.CharFilter(field_name="namespace", label="Namespace")
    label = django_filters.CharFilter(method=_label, label="Label")
    node = django_filters.CharFilter(field_name="node", label="Node")
    node_group = django_filters.CharFilter(field_name="node_group", label="Node group")
    status = django_filters.ChoiceFilter(field_name="status", label="Status",
                                         choices=_choices(POD_STATUSES))
    reason = django_filters.CharFilter(field_name="reason", label="Pending reason")
    claim = django_filters.CharFilter(method=_member("claims"), label="Claim")

    class Meta:
        model = PodSummary
        fields: list[str] = []


class ClaimFilter(django_filters.FilterSet):
    """Claims (both versions) by name, namespace, class, driver, node and status."""

    q = django_filters.CharFilter(field_name="name", lookup_expr="icontains", label="Search")
    namespace = django_filters.CharFilter(field_name="namespace", label="Namespace")
    # ``class`` is a keyword: declared under another name, renamed in __init__.
    class_name = django_filters.CharFilter(method=_member("classes"), label="Class")
    driver = django_filters.CharFilter(method=_member("drivers"), label="Driver")
    node = django_filters.CharFilter(field_name="node", label="Node")
    status = django_filters.ChoiceFilter(field_name="state", label="Status",
                                         choices=_choices(CLAIM_STATUSES))

    class Meta:
        model = ClaimSummary
        fields: list[str] = []

    @classmethod
    def get_filters(cls):
        filters = super().get_filters()
        filters["class"] = filters.pop("class_name")
        return filters


class EventFilter(django_filters.FilterSet):
    """Events by the object they are about (kind, namespace, name), type and reason."""

    q = django_filters.CharFilter(method="search", label="Search")
    namespace = django_filters.CharFilter(field_name="namespace", label="Namespace")
    kind = django_filters.CharFilter(field_name="involved_kind", label="Kind")
    name = django_filters.CharFilter(field_name="involved_name", label="Object")
    status = django_filters.ChoiceFilter(field_name="type", label="Type",
                                         choices=_choices(("Normal", "Warning")))
    reason = django_filters.CharFilter(field_name="reason", label="Reason")

    class Meta:
        model = Event
        fields: list[str] = []

    def search(self, queryset: QuerySet, _name: str, value: str) -> QuerySet:
        if not value:
            return queryset
        return queryset.filter(Q(involved_name__icontains=value) | Q(reason__icontains=value))


LIST_FILTERS: dict[str, type[django_filters.FilterSet]] = {
    "nodes": NodeFilter, "pods": PodFilter, "claims": ClaimFilter, "events": EventFilter}
"""The FilterSet of each list, by the list's name."""
