"""What a conversion found: warnings in the project's problem format, and the objects that
could not be converted."""

from __future__ import annotations

from dataclasses import dataclass, field

from allocation.engine.manifests import Problem
from allocation.engine.objects import KObject

__all__ = ["Report"]


@dataclass
class Report:
    """Warnings (``FILE:DOC (Kind ns/name): field.path: message``), in the order found, and
    the keys of the objects with an impossible item (written only with ``lossy``)."""

    lossy: bool = False
    warnings: list[Problem] = field(default_factory=list)
    failed: list[KObject] = field(default_factory=list)
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
