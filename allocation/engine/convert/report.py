"""What a conversion found: warnings in the project's problem format, and the objects that
could not be converted."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from allocation.engine.manifests import Problem, lists
from allocation.engine.manifests.reader import read_text
from allocation.engine.objects import KObject

__all__ = ["Report", "list_items"]

#: (file, document, kind, name) of an item of a list (``kind: List``, a typed list) -> its
#: index in ``items``.
ListItems = dict[tuple[str, int, str, str], int]


def list_items(texts: Iterable[tuple[str, str]]) -> ListItems:
    """Where the items of list documents (``lists.list_items``) are, so that a warning's
    path starts with ``items[i].`` as the loader's problems do (``docs/manifests.md``)."""
    found: ListItems = {}
    for file_name, text in texts:
        for raw in read_text(text, json_hint=file_name.endswith(".json")):
            data = raw.data
            if raw.error is not None or not isinstance(lists.list_items(data), list):
                continue
            for index, item in enumerate(data["items"]):
                item = lists.list_item(data, item)
                meta = item.get("metadata") if isinstance(item, dict) else None
                if isinstance(meta, dict):
                    found.setdefault((file_name, raw.doc, str(item.get("kind")),
                                      str(meta.get("name"))), index)
    return found


@dataclass
class Report:
    """Warnings (``FILE:DOC (Kind ns/name): field.path: message``), in the order found, and
    the objects with an impossible item (written only with ``lossy``). ``items``: where
    the items of ``kind: List`` documents are (:func:`list_items`)."""

    lossy: bool = False
    warnings: list[Problem] = field(default_factory=list)
    failed: list[KObject] = field(default_factory=list)
    items: ListItems = field(default_factory=dict)
    _seen: set = field(default_factory=set)

    def warn(self, obj: KObject, path: str, message: str, *, impossible: bool = False) -> None:
        """Record one lossy item of ``obj`` at ``path``; ``impossible`` marks the object as
        not convertible (it is then written only as the ``--lossy`` approximation). The same
        message for one object is one item (a quantity attribute on every device of a
        slice): only its first place is reported."""
        if impossible and obj not in self.failed:
            self.failed.append(obj)
        if (id(obj), message) in self._seen:
            return
        self._seen.add((id(obj), message))
        source = obj.source
        prefix = "cannot convert: " if impossible else ""
        suffix = " (written as an approximation: --lossy)" if impossible and self.lossy \
            else ""
        if source is not None:
            index = self.items.get((source.file, source.doc, obj.kind_name, obj.name))
            if index is not None:
                path = f"items[{index}].{path}" if path else f"items[{index}]"
        self.warnings.append(Problem(source.file if source else "<generated>",
                                     source.doc if source else 0, obj.kind_name,
                                     obj.namespace, obj.name, path,
                                     prefix + message + suffix))

    def for_object(self, obj: KObject):
        """``warn`` bound to ``obj``, as ``devices.Warn`` takes it."""
        return lambda path, message, impossible=False: self.warn(
            obj, path, message, impossible=impossible)

    def failed_object(self, obj: KObject) -> bool:
        """Whether ``obj`` had an impossible item."""
        return obj in self.failed
