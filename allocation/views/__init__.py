"""The console's HTTP views: the home page, the live cluster pages, the upload page, the
YAML pages (view and editor) and the user's account page (API token).

Every view requires a signed-in user and only reads; writes go through
``allocation.services`` (the upload page calls ``import_texts``).
"""

from __future__ import annotations

from allocation.views.account import account
from allocation.views.home import home
from allocation.views.lists import list_page
from allocation.views.manifests import yaml_edit, yaml_index, yaml_page
from allocation.views.pages import live_page
from allocation.views.upload import upload

__all__ = ["account", "home", "live_page", "list_page", "upload", "yaml_index", "yaml_page",
           "yaml_edit"]
