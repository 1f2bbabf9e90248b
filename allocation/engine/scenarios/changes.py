"""What-if changes: small, JSON-serialisable edits applied to a cluster's documents.

A scenario is a baseline plus an ordered list of changes. Each change is a mapping with an
``op`` and its arguments, read into its typed operation (``scenarios/operations.py``);
:func:`apply_changes` returns the baseline's documents with the changes applied, sharing
every document it does not touch (copy-on-write, ``scenarios/documents.py``), so a fork of
a large cluster costs only what it changes.

Operations:

- ``pin-pod`` (``pod``: ``ns/name``, ``node``): the pod must run on that node. It is unbound
  and its reservations dropped, then given a required node affinity on ``metadata.name``
  (as DaemonSets pin their pods), so the scheduler places it there or explains why not.
- ``unpin-pod`` (``pod``): back to the queue: unbound, reservations dropped, pin removed.
- ``add-nodes`` (``group``, ``count``): nodes of a NodeGroup, as its scale-up would add them
  (even beyond ``maxSize``: the question is "what if we had more of these nodes").
- ``remove-node`` (``node``): the node, its slices and capacities go (v1 ResourceSlices
  naming it too; network-attached ones stay); its pods are evicted (unbound, their claims
  released: a v1 claim allocated there is deallocated) and planned again.
- ``add-object`` (``manifest``): add or replace one object (a ProvisioningRequest, a pod...).
- ``remove-object`` (``kind``, ``name``, optional ``namespace``).
- ``edit-selector`` (``kind``, ``object``: ``[ns/]name``, ``path``: a dotted path to a
  ``selector`` field, or a DeviceClass's ``spec.selectors[i].cel.expression``,
  ``expression``).
- ``set-strategy`` (``strategy``: ``first-fit`` or ``best-fit``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from allocation.engine.scenarios.documents import (
    Applied,
    ChangeError,
    DocumentIndex,
    Documents,
)
from allocation.engine.scenarios.operations import OPS, read

__all__ = ["OPS", "ChangeError", "Applied", "apply_changes", "check_change", "pinned_node"]


def check_change(change: Any, index: int = 0) -> None:
    """Raise :class:`ChangeError` unless ``change`` is well-formed (not whether it applies)."""
    read(change, index)


def pinned_node(pod: dict) -> str | None:
    """The node a ``pin-pod`` change pinned ``pod`` to, if any."""
    required = ((((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in required.get("nodeSelectorTerms") or ():
        for field_ in term.get("matchFields") or ():
            if field_.get("key") == "metadata.name" and field_.get("operator") == "In" and \
                    len(field_.get("values") or ()) == 1:
                return field_["values"][0]
    return None


def apply_changes(documents: Sequence[dict], changes: Sequence[dict],
                  strategy: str = "first-fit", index: DocumentIndex | None = None) -> Applied:
    """The documents with ``changes`` applied in order; the input is never modified.
    ``index``: ``DocumentIndex(documents)``, kept by a caller that applies changes to the
    same documents again and again (a console's baseline).

    Raises:
        ChangeError: a change is malformed or does not apply (an object it names is
            missing), with its index and field.
    """
    docs = Documents(documents, index)
    applied = Applied(strategy)
    for index, change in enumerate(changes):
        read(change, index).apply(docs, applied)
    applied.edited = docs  # its list is made when asked for (``Applied.documents``)
    applied.moved = docs.moved
    applied.delta = docs.delta()
    return applied
