"""The console's page routes. Every live page's route comes from
``allocation.presenters.live.PAGES`` (its name is the URL name); its socket is
``/ws/pages/<route>`` (``console/routing.py``), from the same entry."""

from __future__ import annotations

from django.urls import path

from allocation import views
from allocation.presenters.lists import LIST_TITLES
from allocation.presenters.live import PAGES

app_name = "allocation"

urlpatterns = [
    path("", views.home, name="home"),
    *(path(page.route, views.live_page, {"page": name}, name=name)
      for name, page in PAGES.items()),
    path("upload/", views.upload, name="upload"),
    path("account/", views.account, name="account"),
    # YAML: any object's manifest; the editor for what staff edit (docs/console-pages.md)
    path("yaml/", views.yaml_index, name="yaml_index"),
    path("yaml/<str:kind>/<str:name>/", views.yaml_page, name="yaml"),
    path("yaml/<str:kind>/<str:namespace>/<str:name>/", views.yaml_page, name="yaml"),
    path("edit/<str:kind>/<str:name>/", views.yaml_edit, name="yaml_edit"),
    path("edit/<str:kind>/<str:namespace>/<str:name>/", views.yaml_edit, name="yaml_edit"),
    *(path(f"{kind}/", views.list_page, {"kind": kind}, name=f"{kind}_list")
      for kind in LIST_TITLES),
]
