"""The resource.k8s.io/v1 allocator: upstream's outcomes on plain v1 dicts (docs/v1.md).

Pure Python; no Django, no seed-dialect models. The boundary is ``Allocator`` (slices,
classes, the book of allocations) and ``Allocator.allocate(node, claims)``.
"""

from __future__ import annotations

from allocation.engine.v1.book import AllocationBook
from allocation.engine.v1.errors import AllocationError, UnschedulableError
from allocation.engine.v1.features import (
    DEFAULT_RELEASE,
    RELEASES,
    FeatureGateError,
    Profile,
    make_profile,
    parse_feature_gates,
)
from allocation.engine.v1.search import MAX_RESULTS, Allocator, Outcome, claim_key

__all__ = [
    "DEFAULT_RELEASE",
    "MAX_RESULTS",
    "RELEASES",
    "AllocationBook",
    "AllocationError",
    "Allocator",
    "FeatureGateError",
    "Outcome",
    "Profile",
    "UnschedulableError",
    "claim_key",
    "make_profile",
    "parse_feature_gates",
]
