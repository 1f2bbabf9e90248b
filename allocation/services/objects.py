"""Writing one object at a time: what the REST API and the admin do.

The text of one manifest (YAML or JSON) is read by the engine's loader, so problems have
the same format as everywhere else, then stored through :func:`allocation.services.writes.
write` (validation of what it touches, one transaction, announcement after commit).
"""

from __future__ import annotations

from django.db import transaction

from allocation.engine.manifests import InvalidManifests, Problem, load_texts
from allocation.engine.objects import KObject
from allocation.models import StoredObject, models_of_kind
from allocation.services.cluster import locked_cluster
from allocation.services.permissions import check_write
from allocation.services.profile import console_profile
from allocation.services.store import identity_of, model_for, row_identity
from allocation.services.writes import write

__all__ = ["ObjectExists", "parse_one", "create_object", "replace_object", "delete_object",
           "find_row"]


class ObjectExists(Exception):
    """Creating an object that is already stored (replace it instead)."""

    def __init__(self, row: StoredObject) -> None:
        self.row = row
        super().__init__(f"{row_identity(row)[1]} {row.ref} already exists")


def _problem(file: str, obj: KObject | None, path: str, message: str) -> InvalidManifests:
    if obj is None:
        return InvalidManifests([Problem(file, 1, "", None, None, path, message)])
    return InvalidManifests([Problem(file, 1, obj.kind_name, obj.namespace, obj.name, path,
                                     message)])


def parse_one(text: str, model: type[StoredObject], file: str = "request.yaml") -> KObject:
    """The one object of ``text``, which must be of ``model``'s kind."""
    loaded = load_texts([(file, text)], console_profile())
    found = [*loaded.objects, *loaded.events]
    if len(found) != 1:
        raise _problem(file, None, "", f"expected exactly one object, found {len(found)}")
    obj = found[0]
    if model_for(obj) is not model:
        wanted, given = model.KIND or "a vendor object", obj.kind_name
        if obj.kind_name == model.KIND:  # the seed and the v1 shape of one kind
            wanted = f"{model.KIND} of {', '.join(model.KIND_SPEC.api_versions)}"
            given = f"{obj.api_version} {obj.kind_name}"
        raise _problem(file, obj, "kind", f"this endpoint takes {wanted}, not {given}")
    return obj


def find_row(obj: KObject) -> StoredObject | None:
    """The stored row with ``obj``'s identity, if any."""
    group, kind, namespace, name = identity_of(obj)
    model = model_for(obj)
    if group or model.KIND == "":
        return model.objects.filter(namespace=namespace, name=name, api_group=group,
                                    kind=kind).first()
    # Every version of the kind: a seed and a v1 ResourceClaim of one name are one object
    # (docs/v1.md, "The console"). Events have a model of their own.
    for twin in models_of_kind(kind) or [model]:
        row = twin.objects.filter(namespace=namespace, name=name).first()
        if row is not None:
            return row
    return None


def create_object(text: str, model: type[StoredObject], user=None,
                  file: str = "request.yaml") -> StoredObject:
    """Store a new object; :class:`ObjectExists` if its identity is taken."""
    obj = parse_one(text, model, file)
    check_write(user, [obj])
    with transaction.atomic():
        # Checked under the write lock: two concurrent creates of one name must not both
        # succeed, the second silently replacing the first.
        locked_cluster()
        existing = find_row(obj)
        if existing is not None:
            raise ObjectExists(existing)
        if model_for(obj).KIND == "Event":
            write([], [obj])
        else:
            write([obj])
    return find_row(obj)


def replace_object(row: StoredObject, text: str, user=None,
                   file: str = "request.yaml") -> StoredObject:
    """Replace a stored object's document; the new one must have the same identity."""
    obj = parse_one(text, type(row), file)
    check_write(user, [obj])
    if identity_of(obj) != row_identity(row):
        raise _problem(file, obj, "metadata.name",
                       f"the document names {obj.key}, not {row_identity(row)[1]} {row.ref}")
    if type(row).KIND == "Event":
        write([], [obj])
    else:
        write([obj])
    return find_row(obj)


def delete_object(row: StoredObject, user=None) -> None:
    """Delete a stored object (refused if the cluster would then be invalid)."""
    from allocation.services.store import build_from_row

    check_write(user, [build_from_row(row)])
    write([], deletes=[row_identity(row)])
