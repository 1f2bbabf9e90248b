"""The console's HTTP views: the home page, the live cluster pages and the upload page.

Every view requires a signed-in user and only reads; writes go through
``allocation.services`` (the upload page calls ``import_texts``).
"""

from __future__ import annotations

from allocation.views.home import home
from allocation.views.pages import (
    claim_detail,
    dashboard,
    negotiations,
    node_detail,
    pod_detail,
    provisioning_request_detail,
)
from allocation.views.upload import upload

__all__ = ["home", "dashboard", "node_detail", "claim_detail", "pod_detail",
           "provisioning_request_detail", "negotiations", "upload"]
