"""Seed-dialect documents (``resource.k8s.io/v1alpha2`` and the planner's seed kinds) as
resource.k8s.io/v1 documents, with a warning per lossy or impossible item.

The mapping is spec ``v1.md`` section 5; ``docs/v1.md`` ("Converting seed manifests") says
what each row becomes and every choice made where the table leaves one. Pure: no Django.
"""

from __future__ import annotations

from allocation.engine.convert.cluster import Conversion, attribute_types, convert_loaded
from allocation.engine.convert.report import Report
from allocation.engine.convert.selectors import RewriteError, Rewritten, rewrite_selector
from allocation.engine.convert.slices import COUNTER_MODES

__all__ = ["COUNTER_MODES", "Conversion", "Report", "RewriteError", "Rewritten",
           "attribute_types", "convert_loaded", "rewrite_selector"]
