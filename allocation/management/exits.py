"""How the engine's commands end on failure: one home for their exit codes.

Bad input is exit 2 with one line per problem and what was not done; an engine bug is
exit 1 with the traceback, said plainly (docs/manifests.md).
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

from allocation.engine.manifests import InvalidManifests

__all__ = ["reported_failures"]


@contextmanager
def reported_failures(stderr, verb: str) -> Iterator[None]:
    """Run the block; on InvalidManifests print each problem and ``nothing was <verb>.``
    and exit 2, on any other exception print the traceback and exit 1."""
    try:
        yield
    except InvalidManifests as exc:
        for problem in exc.problems:
            stderr.write(str(problem))
        stderr.write(f"{len(exc.problems)} problem(s); nothing was {verb}.")
        sys.exit(2)
    except Exception:  # an engine bug: say so plainly, with the traceback
        stderr.write("internal error: the planner failed; please report this:")
        stderr.write(traceback.format_exc())
        sys.exit(1)
