"""What ``manage.py import --kubeconfig`` and ``manage.py mirror`` do, shared by both.

Exit codes as for every command of the project (``allocation/management/exits.py``): 2 when
the cluster cannot be read or nothing read can be stored (the message says why: a missing
permission names the verb and resource), 1 with the traceback for a bug.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

from allocation.engine.manifests import InvalidManifests
from clusters.kube.client import SourceError, connect
from clusters.mirror import Mirror, import_cluster

__all__ = ["import_from_cluster", "mirror_cluster"]


@contextmanager
def _reported(command, verb: str) -> Iterator[None]:
    try:
        yield
    except SourceError as exc:
        command.stderr.write(f"error: {exc}")
        command.stderr.write(f"nothing was {verb}.")
        sys.exit(2)
    except InvalidManifests as exc:
        for problem in exc.problems:
            command.stderr.write(str(problem))
        command.stderr.write(f"{len(exc.problems)} problem(s); nothing was {verb}.")
        sys.exit(2)
    except Exception:
        command.stderr.write("internal error: the planner failed; please report this:")
        command.stderr.write(traceback.format_exc())
        sys.exit(1)


def import_from_cluster(command, kubeconfig: str | None, context: str | None,
                        replace: bool) -> None:
    """Import the cluster once; progress and refused objects on stderr, the summary on
    stdout."""
    with _reported(command, "imported"):
        connection = connect(kubeconfig, context)
        command.stderr.write(f"reading context {connection.context} at {connection.server}")
        imported = import_cluster(connection, command.stderr.write, replace)
    report = imported.report
    for problem in report.rejected:
        command.stderr.write(f"left out: {problem}")
    counts = ", ".join(f"{n} {kind}" for kind, n in report.counts.items()) or "nothing"
    left_out = (f"; {len(report.rejected)} problem(s), those objects left out"
                if report.rejected else "")
    revision = f" (revision {report.result.revision})" if report.result else ""
    command.stdout.write(f"imported from {connection.context}: {counts}{left_out}{revision}")

def mirror_cluster(command, kubeconfig: str | None, context: str | None,
                   replace: bool) -> None:
    """Import, then mirror until interrupted (Ctrl-C or SIGTERM)."""
    with _reported(command, "mirrored"):
        connection = connect(kubeconfig, context)
        command.stderr.write(f"mirroring context {connection.context} at {connection.server}")
        mirror = Mirror(connection, command.stderr.write)
        try:
            mirror.run(replace=replace)
        except KeyboardInterrupt:
            mirror.close()
