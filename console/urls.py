"""Root URL configuration of the DRA Planner console."""

from django.contrib import admin
from django.urls import include, path
from rest_framework.routers import DefaultRouter

from allocation.api import urls as allocation_api
from console.api_docs import RedocView, SchemaView, SwaggerView
from scenarios.api import urls as scenarios_api

API_APPS = (allocation_api, scenarios_api)
"""Every app's ``api/urls.py``, mounted at ``/api/`` under the namespace ``api``."""

_root = DefaultRouter()
for app in API_APPS:
    _root.registry.extend(app.router.registry)

api_urlpatterns = [
    # The router root lists every app's endpoints.
    path("", _root.get_api_root_view(), name="api-root"),
    path("schema/", SchemaView.as_view(), name="schema"),
    # Pages for people: Swagger UI and Redoc over the schema (assets served locally)
    path("docs/", SwaggerView.as_view(url_name="api:schema"), name="swagger-ui"),
    path("redoc/", RedocView.as_view(url_name="api:schema"), name="redoc"),
    *(pattern for app in API_APPS for pattern in app.urlpatterns),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    # login/, logout/, password_change/, password_reset/ ... (template: registration/*.html)
    path("accounts/", include("django.contrib.auth.urls")),
    # REST API: router root, every app's endpoints, OpenAPI schema at api/schema/,
    # Swagger UI at api/docs/, Redoc at api/redoc/
    path("api/", include((api_urlpatterns, "api"))),
    path("scenarios/", include("scenarios.urls")),
    path("cluster/", include("clusters.urls")),
    path("", include("allocation.urls")),
]
