"""The console's page routes. Every page is also live: ``/ws/pages<page path>`` (see
``console/routing.py``) pushes its fragments after each change."""

from __future__ import annotations

from django.urls import path

from allocation import views

app_name = "allocation"

urlpatterns = [
    path("", views.home, name="home"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("nodes/<str:name>/", views.node_detail, name="node"),
    path("claims/<str:namespace>/<str:name>/", views.claim_detail, name="claim"),
    path("pods/<str:namespace>/<str:name>/", views.pod_detail, name="pod"),
    path("provisioningrequests/<str:namespace>/<str:name>/",
         views.provisioning_request_detail, name="provisioning_request"),
    path("negotiations/", views.negotiations, name="negotiations"),
    path("upload/", views.upload, name="upload"),
]
