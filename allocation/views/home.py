"""The landing page."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render

from allocation.views.common import HtmxHttpRequest

__all__ = ["home"]


@login_required
def home(request: HtmxHttpRequest) -> HttpResponse:
    """What the console is, with the way to the dashboard and the command line."""
    return render(
        request,
        "allocation/home.html",
        {"simulate_command": "python manage.py simulate examples/quickstart.yaml"},
    )
