"""Errors of the v1 allocator: fatal for the scheduling attempt, or unschedulable."""

from __future__ import annotations

__all__ = ["AllocationError", "CelRuntimeError", "UnschedulableError", "invalid_pool",
           "selector_name"]


def selector_name(owner: str, index: int) -> str:
    """A selector in words: ``class gpu selector #0`` or, for a claim's own selector,
    ``request selector #1`` (the claim and request are named beside it).

    Returns:
        The name; ``owner`` is the allocator's ``class C`` or ``claim ns/name``.
    """
    return f"{'request' if owner.startswith('claim ') else owner} selector #{index}"


class AllocationError(Exception):
    """A fatal allocator error: upstream fails the Allocate call and the scheduling attempt
    ends with SchedulerError on every node (CEL runtime errors, bad requests, an All
    request meeting an incomplete or invalid pool or a failing constraint)."""


def invalid_pool(pool) -> AllocationError:
    """[1.34] The fatal error of a search that reaches an invalid pool (upstream's text).

    Returns:
        The error, to raise.
    """
    return AllocationError(f"pool {pool.name} is invalid: {pool.invalid_reason}")


class CelRuntimeError(AllocationError):
    """A selector failed at run time on one device (spec section 6).

    ``str()`` is upstream's text (``owner: selector #i: CEL runtime error: error``); the
    planner also knows the claim, request, device and expression, and ``detail`` says
    them all, for the pod's condition and the explain annotation. ``claim`` and
    ``request`` are filled in by the search once it knows which request was being served.
    """

    def __init__(self, owner: str, index: int, expression: str, device: str,
                 error: str) -> None:
        super().__init__(f"{owner}: selector #{index}: CEL runtime error: {error}")
        self.owner = owner
        self.index = index
        self.expression = expression
        self.device = device
        self.error = error
        self.claim = ""
        self.request = ""

    def place(self, claim: str, request: str) -> None:
        """Record the claim and request being served (the innermost caller wins)."""
        if not self.claim:
            self.claim, self.request = claim, request

    @property
    def detail(self) -> str:
        """One line naming the claim, request, device, selector, expression and error (an
        expression written over several lines, as drivers' examples are, on one line with
        its runs of white space as one space; ``fields`` keeps it as written)."""
        where = ", ".join(p for p in (f"claim {self.claim}" if self.claim else "",
                                      f"request {self.request}" if self.request else "",
                                      f"device {self.device}") if p)
        return (f"{where}: {selector_name(self.owner, self.index)} "
                f"`{' '.join(self.expression.split())}`: CEL runtime error: {self.error}")

    def fields(self) -> dict[str, str]:
        """The same as a dict (the explain annotation's ``error``)."""
        return {"claim": self.claim, "request": self.request, "device": self.device,
                "selector": selector_name(self.owner, self.index),
                "expression": self.expression, "error": self.error}


class UnschedulableError(Exception):
    """The pod cannot be scheduled at all, e.g. a request names a missing DeviceClass."""
