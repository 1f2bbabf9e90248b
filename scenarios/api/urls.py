"""Routes of the scenarios app's REST API (``/api/scenarios/``, mounted by ``console.urls``)."""

from __future__ import annotations

from rest_framework.routers import DefaultRouter

from scenarios.api.views import ScenarioViewSet

__all__ = ["urlpatterns", "router"]

router = DefaultRouter()
router.include_root_view = False  # one root for every app: console.urls
router.register("scenarios", ScenarioViewSet, basename="scenarios")

urlpatterns = router.urls
