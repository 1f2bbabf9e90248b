"""Errors of the v1 allocator: fatal for the scheduling attempt, or unschedulable."""

from __future__ import annotations

__all__ = ["AllocationError", "UnschedulableError"]


class AllocationError(Exception):
    """A fatal allocator error: upstream fails the Allocate call and the scheduling attempt
    ends with SchedulerError on every node (CEL runtime errors, bad requests, an All
    request meeting an incomplete or invalid pool or a failing constraint)."""


class UnschedulableError(Exception):
    """The pod cannot be scheduled at all, e.g. a request names a missing DeviceClass."""
