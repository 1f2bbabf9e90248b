"""Names, limits and small pure helpers of ProvisioningRequests (KEP-4150 API,
``docs/autoscaling.md``).

Free of other engine imports (but the clock's bounds), so manifest validation and the
autoscaler both use them.
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

from allocation.engine.events import MAX_DURATION

__all__ = ["CHECK_CAPACITY", "ATOMIC", "CLASS_NAMES", "SEED_CLASS_ANNOTATION",
           "SEED_CONSUME_ANNOTATION", "CONSUME_ANNOTATION", "DIGEST_KEY", "VALID_UNTIL",
           "DEFAULT_RETRY_WINDOW", "BACKOFF_FIRST", "BACKOFF_MAX", "spec_digest", "backoff",
           "valid_until"]

CHECK_CAPACITY = "check-capacity.autoscaling.x-k8s.io"
ATOMIC = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
CLASS_NAMES = (CHECK_CAPACITY, ATOMIC)

SEED_CLASS_ANNOTATION = "cluster-autoscaler.kubernetes.io/provisioning-class-name"
SEED_CONSUME_ANNOTATION = "cluster-autoscaler.kubernetes.io/consume-provisioning-request"
CONSUME_ANNOTATION = "autoscaling.x-k8s.io/consume-provisioning-request"

DIGEST_KEY = "draplanner.io/spec-digest"
"""``status.statuses`` key holding the digest of the spec the status was computed for."""

VALID_UNTIL = "ValidUntilSeconds"
DEFAULT_RETRY_WINDOW = timedelta(days=7)  # upstream's retry limit without ValidUntilSeconds
BACKOFF_FIRST = timedelta(minutes=1)
BACKOFF_MAX = timedelta(minutes=10)


def spec_digest(spec: dict) -> str:
    """A short, stable digest of a ProvisioningRequest ``spec`` (key order does not matter)."""
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def backoff(failures: int) -> timedelta:
    """The wait after the ``failures``-th failed attempt: 1 min, doubling, at most 10 min."""
    return min(BACKOFF_FIRST * (2 ** min(max(failures - 1, 0), 16)), BACKOFF_MAX)


def valid_until(parameters: dict[str, str]) -> timedelta | None:
    """``ValidUntilSeconds`` as a duration; ValueError naming the problem if it is invalid."""
    text = parameters.get(VALID_UNTIL)
    if text is None:
        return None
    if not isinstance(text, str) or not text.strip().isascii() or not text.strip().isdigit():
        raise ValueError(f"{VALID_UNTIL} must be a whole number of seconds as a string, "
                         f"not {text[:40]!r}")
    if len(text.strip()) > 12 or int(text.strip()) > MAX_DURATION.total_seconds():
        raise ValueError(f"{VALID_UNTIL} must be at most {int(MAX_DURATION.total_seconds())} "
                         f"seconds (100 years), not {text.strip()[:40]}")
    return timedelta(seconds=int(text.strip()))
