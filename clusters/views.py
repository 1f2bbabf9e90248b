"""The live source's status fragment (polled by the dashboard). Reads only."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from clusters.presenters import source_view

__all__ = ["source_status"]


@login_required
def source_status(request: HttpRequest) -> HttpResponse:
    return render(request, "clusters/htmx/source_status.html", {"source": source_view()})
