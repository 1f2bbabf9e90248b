"""The resource.k8s.io/v1 allocator: upstream's outcomes on plain v1 dicts (docs/v1.md).

Pure Python; no Django, no seed-dialect models. The boundary is ``Allocator`` (slices,
classes, the book of allocations) and ``Allocator.allocate(node, claims)``.
"""

from __future__ import annotations

from allocation.engine.v1.allocator import (
    NOT_AVAILABLE,
    Allocator,
    Attempt,
    allocated_claim_fits,
    dra_score,
)
from allocation.engine.v1.book import AllocationBook
from allocation.engine.v1.errors import AllocationError, CelRuntimeError, UnschedulableError
from allocation.engine.v1.features import (
    DEFAULT_RELEASE,
    RELEASES,
    FeatureGateError,
    Profile,
    ignored_gates,
    make_profile,
    parse_feature_gates,
)
from allocation.engine.v1.requests import claim_key
from allocation.engine.v1.search import (
    CANNOT_ALLOCATE,
    INVALID_POOLS,
    MAX_RESULTS,
    TIMED_OUT,
    Outcome,
)

__all__ = [
    "CANNOT_ALLOCATE",
    "DEFAULT_RELEASE",
    "INVALID_POOLS",
    "NOT_AVAILABLE",
    "MAX_RESULTS",
    "RELEASES",
    "TIMED_OUT",
    "AllocationBook",
    "AllocationError",
    "Allocator",
    "Attempt",
    "CelRuntimeError",
    "FeatureGateError",
    "Outcome",
    "Profile",
    "UnschedulableError",
    "allocated_claim_fits",
    "dra_score",
    "claim_key",
    "make_profile",
    "parse_feature_gates",
    "ignored_gates",
]
