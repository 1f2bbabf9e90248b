"""Routes of the allocation app's REST API: a viewset per kind, vendor objects, Events.

``console.urls`` mounts them at ``/api/`` together with the other apps' API routes, the
router root (listing every app's endpoints) and the OpenAPI schema.
"""

from __future__ import annotations

from rest_framework.routers import DefaultRouter

from allocation.api.views import VIEWSETS

__all__ = ["urlpatterns", "router"]

router = DefaultRouter()
router.include_root_view = False  # one root for every app: console.urls
for prefix, viewset in VIEWSETS.items():
    router.register(prefix, viewset, basename=prefix)

urlpatterns = router.urls
