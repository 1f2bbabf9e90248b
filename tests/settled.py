"""A stored cluster the worker has settled, for tests of what pages read from the rows."""

from __future__ import annotations

from allocation.services import cluster
from allocation.services import reconcile as passes
from allocation.services.manifests import import_texts

__all__ = ["settle", "store_settled"]


def settle(passes_at_most: int = 5) -> None:
    """Run worker passes until one needs no other.

    Raises:
        AssertionError: the cluster did not settle in ``passes_at_most`` passes.
    """
    for _ in range(passes_at_most):
        if not passes.reconcile().again:
            return
    raise AssertionError(f"the cluster did not settle in {passes_at_most} passes")


def store_settled(text: str) -> None:
    """Upload ``text`` as one file, settle it and drop the console's cached state."""
    import_texts([("cluster.yaml", text)])
    settle()
    cluster.clear_cache()
