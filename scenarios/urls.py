"""Scenario pages under ``/scenarios/``."""

from django.urls import path

from scenarios import views

app_name = "scenarios"

urlpatterns = [
    path("", views.scenario_list, name="list"),
    path("new/", views.scenario_create, name="create"),
    path("<int:pk>/", views.scenario_detail, name="detail"),
    path("<int:pk>/body/", views.scenario_body, name="body"),
    path("<int:pk>/changes/", views.scenario_change, name="change"),
    path("<int:pk>/export/", views.scenario_export, name="export"),
    path("<int:pk>/<str:action>/", views.scenario_action, name="action"),
]
