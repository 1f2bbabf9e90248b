"""The live cluster pages: each renders a presenter's view of the stored cluster.

The same page names and fragments serve the WebSocket updates (``allocation.consumers``);
see ``allocation.presenters.live``. An htmx request gets the page body only.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render

from allocation.presenters import live
from allocation.views.common import HtmxHttpRequest

__all__ = ["live_page", "render_live_page"]


def render_live_page(request: HtmxHttpRequest, page: str, **kwargs: str) -> HttpResponse:
    """Render live page ``page`` for the stored cluster; 404 if its object does not exist."""
    state, revision = live.page_source(page, kwargs)
    query = live.query_kwargs(page, request.GET)
    context = live.page_context(page, state, {**kwargs, **query})
    if context is None:
        raise Http404(f"no such {page.replace('_', ' ')}")
    context["revision"] = revision
    context["live_query"] = urlencode(query)  # the socket renders with the same parameters
    template = live.PAGES[page].template
    if request.htmx:
        template += "#page-body"
    return render(request, template, context)


@login_required
def live_page(request: HtmxHttpRequest, page: str, **kwargs: str) -> HttpResponse:
    """The view of every live page; ``allocation/urls.py`` routes each entry of ``PAGES``."""
    return render_live_page(request, page, **kwargs)
