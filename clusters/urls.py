"""URLs of the clusters app (mounted at ``/cluster/``)."""

from __future__ import annotations

from django.urls import path

from clusters import views

app_name = "clusters"

urlpatterns = [
    path("source/", views.source_status, name="source_status"),
]
