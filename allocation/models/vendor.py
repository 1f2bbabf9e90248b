"""Stored vendor objects: any other apiVersion/kind, kept as it is (driver CRD instances)."""

from __future__ import annotations

from django.db import models

from allocation.models.base import StoredObject

__all__ = ["VendorObject"]


class VendorObject(StoredObject):
    """An opaque object, identified by API group, kind, namespace and name."""

    KIND = ""  # any kind the planner does not interpret
    FILTERS = {"namespace": ("namespace", "exact"), "kind": ("kind", "exact"),
               "group": ("api_group", "exact")}

    api_group = models.CharField(max_length=253, blank=True, db_index=True)
    kind = models.CharField(max_length=253, db_index=True)

    class Meta(StoredObject.Meta):
        constraints = [
            models.UniqueConstraint(fields=["api_group", "kind", "namespace", "name"],
                                    name="allocation_vendorobject_unique_name"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}.{self.api_group} {super().__str__()}"

    @property
    def ref(self) -> str:
        return super().__str__()

    @classmethod
    def columns_for(cls, obj) -> dict:
        return {"api_group": obj.api_group, "kind": obj.kind_name}
