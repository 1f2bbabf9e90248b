"""Documents that hold others: ``kind: List`` (what ``kubectl get -o yaml`` writes) and the
typed lists the API itself returns (``ResourceSliceList``, ``NodeList``: what
``kubectl get --raw`` and client libraries dump), read as Kubernetes' decoder reads them.

A typed list's items carry no ``apiVersion`` or ``kind``: each takes the list's
``apiVersion`` and its kind without the ``List`` suffix (apimachinery's unstructured
decoding, which treats every ``*List`` kind with ``items`` so).
"""

from __future__ import annotations

from typing import Any

__all__ = ["list_items", "list_item"]


def list_items(data: Any) -> Any:
    """The ``items`` of a list document, which the caller checks is a list; None for any
    other document (not a mapping, no ``items``, a kind not ending in ``List``)."""
    if not isinstance(data, dict) or "items" not in data:
        return None
    kind = data.get("kind")
    return data["items"] if isinstance(kind, str) and kind.endswith("List") else None


def list_item(data: dict, item: Any) -> Any:
    """``item`` of the list ``data`` as the API reads it: a typed list's item without its
    own ``apiVersion`` or ``kind`` takes the list's (a new mapping; the item is left as
    it is)."""
    kind = data["kind"]
    if kind == "List" or not isinstance(item, dict) or ("apiVersion" in item and "kind" in item):
        return item
    return {"apiVersion": data.get("apiVersion"), "kind": kind[:-len("List")], **item}
