"""``{% load cluster_source %}{% cluster_source %}``: the live source's status line, which
refreshes itself (``templates/clusters/htmx/source_status.html``)."""

from __future__ import annotations

from django import template

from clusters.presenters import source_view

__all__ = ["cluster_source"]

register = template.Library()


@register.inclusion_tag("clusters/htmx/source_status.html")
def cluster_source() -> dict:
    return {"source": source_view()}
