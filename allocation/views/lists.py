"""The list pages: nodes, pods, claims and Events as searchable, sortable, paginated tables.

Each list is a FilterSet (``allocation/presenters/filters.py``, shared with the REST API)
over read-model rows or stored Events, and a django-tables2 table
(``allocation/presenters/tables.py``) that sorts and pages in the database: no list builds
a cluster state (docs/console-pages.md, "Lists").
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django_tables2 import RequestConfig

from allocation.presenters.filters import LIST_FILTERS
from allocation.presenters.lists import LIST_TITLES, list_queryset
from allocation.presenters.tables import LIST_TABLES, PER_PAGE

__all__ = ["list_page"]


@login_required
def list_page(request: HttpRequest, kind: str) -> HttpResponse:
    """One page of list ``kind`` (``nodes``, ``pods``, ``claims``, ``events``), filtered."""
    filterset = LIST_FILTERS[kind](request.GET or None, queryset=list_queryset(kind))
    table = LIST_TABLES[kind](filterset.qs)
    RequestConfig(request, paginate={"per_page": PER_PAGE}).configure(table)
    return render(request, "allocation/list.html", {
        "kind": kind, "title": LIST_TITLES[kind], "filter": filterset, "table": table})
