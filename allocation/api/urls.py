"""Routes of the REST API (mounted at ``/api/`` by ``console.urls``)."""

from __future__ import annotations

from django.urls import path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.routers import DefaultRouter

from allocation.api.views import VIEWSETS
from scenarios.api.views import ScenarioViewSet

__all__ = ["urlpatterns", "router"]

app_name = "api"

router = DefaultRouter()
for prefix, viewset in VIEWSETS.items():
    router.register(prefix, viewset, basename=prefix)
router.register("scenarios", ScenarioViewSet, basename="scenarios")

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    *router.urls,
]
