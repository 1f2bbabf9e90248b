"""The abstract stored object: one Kubernetes-style document plus columns to filter by.

The document is kept as canonical JSON text rather than a ``JSONField``: PostgreSQL's
``jsonb`` rewrites numbers (``1e+20`` comes back as an integer) and refuses ``\\u0000``, and
an export must give back exactly what was imported. The indexed columns are derived from
the document by the services on every save and are never edited on their own.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from django.db import models

from allocation.engine.kinds import KindSpec

__all__ = ["StoredObject", "canonical_json", "list_column"]


def canonical_json(document: Any) -> str:
    """The one text form of a document: sorted keys, no insignificant spaces."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def list_column(values) -> str:
    """Several values in one filterable column: ``,a,b,`` (filtered with ``,a,``)."""
    unique = sorted({v for v in values if v})
    return f",{','.join(unique)}," if unique else ""


class StoredObject(models.Model):
    """Base of every kind's model: identity, document order, the document, filter columns.

    Subclasses set ``KIND_SPEC`` (the kind, from ``allocation/engine/kinds.py``, which gives
    ``KIND`` and ``NAMESPACED``) and ``FILTERS`` (API filter name -> ``(column, lookup)``),
    and override :meth:`columns_for` to derive their own indexed columns from the engine
    object.
    """

    KIND_SPEC: ClassVar[KindSpec | None] = None
    KIND: ClassVar[str] = ""
    NAMESPACED: ClassVar[bool] = True
    FILTERS: ClassVar[dict[str, tuple[str, str]]] = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("KIND_SPEC")
        if spec is not None:
            cls.KIND = spec.name
            cls.NAMESPACED = spec.namespaced

    position = models.BigIntegerField(
        db_index=True, help_text="Order of the object in the cluster's documents (input order).")
    api_version = models.CharField(max_length=253)
    namespace = models.CharField(max_length=253, blank=True, db_index=True,
                                 help_text="Empty for cluster-scoped objects.")
    name = models.CharField(max_length=253, db_index=True)
    status = models.CharField(max_length=64, blank=True, db_index=True,
                              help_text="A one-word summary of the object's status, if any.")
    uid = models.CharField(max_length=128, blank=True, db_index=True,
                           help_text="metadata.uid, if any: one object per uid "
                                     "(allocation/engine/manifests/uids.py).")
    document = models.TextField(help_text="The whole manifest as canonical JSON.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "name"],
                                    name="%(app_label)s_%(class)s_unique_name"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def manifest(self) -> dict:
        """The stored document, decoded (a fresh copy each time)."""
        return json.loads(self.document)

    @property
    def ref(self) -> str:
        """``namespace/name`` or ``name``: the object's address in the API."""
        return str(self)

    @classmethod
    def columns_for(cls, obj) -> dict[str, Any]:
        """The indexed columns of this kind for an engine object (besides identity)."""
        return {}
