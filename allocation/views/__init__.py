"""The console's HTTP views: the home page, the live cluster pages and the upload page.

Every view requires a signed-in user and only reads; writes go through
``allocation.services`` (the upload page calls ``import_texts``).
"""

from __future__ import annotations

from allocation.views.home import home
from allocation.views.lists import list_page
from allocation.views.pages import live_page
from allocation.views.upload import upload

__all__ = ["home", "live_page", "list_page", "upload"]
