"""Root URL configuration of the DRA Planner console."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    # login/, logout/, password_change/, password_reset/ ... (template: registration/*.html)
    path("accounts/", include("django.contrib.auth.urls")),
    # REST API (allocation.api): router root, every kind, OpenAPI schema at api/schema/
    path("api/", include("allocation.api.urls")),
    path("scenarios/", include("scenarios.urls")),
    path("", include("allocation.urls")),
]
