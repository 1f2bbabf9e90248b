"""Who may write which kinds (`docs/console.md`, Permissions).

Staff may write everything. Other signed-in users may write the kinds a cluster's users
create themselves: claims, pods and ProvisioningRequests, and the templates those need
(ResourceClaimTemplates, PodTemplates). Infrastructure (nodes, slices, capacities, node
groups), classes, parameters and drivers are staff-only; so are vendor objects (they are
class and claim parameters too) and Events. Everyone signed in reads everything.
``user=None`` means the system itself (management commands, the worker).

Objects read from a live cluster are read-only for everyone (the cluster is the truth; edit
them in a what-if scenario): the app that mirrors them adds a check here
(:func:`add_read_only_check`), so this module never imports it (docs/live-cluster.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.core.exceptions import PermissionDenied

__all__ = ["USER_WRITABLE_KINDS", "NotPermitted", "ReadOnly", "can_write", "check_write",
           "add_read_only_check"]

USER_WRITABLE_KINDS = frozenset({"ResourceClaim", "Pod", "ProvisioningRequest",
                                 "ResourceClaimTemplate", "PodTemplate"})


class NotPermitted(PermissionDenied):
    """The user may not write some of the objects; ``refused`` names them."""

    def __init__(self, refused: list[str]) -> None:
        self.refused = refused
        super().__init__("only staff may write " + ", ".join(refused))


class ReadOnly(NotPermitted):
    """Some of the objects are read-only (mirrored from a live cluster); ``str`` says which
    and what to do instead."""

    def __init__(self, message: str) -> None:
        self.refused = [message]
        PermissionDenied.__init__(self, message)


ReadOnlyCheck = Callable[[list], "str | None"]
"""Given engine objects, the message refusing some of them, or None."""
_read_only_checks: list[ReadOnlyCheck] = []


def add_read_only_check(check: ReadOnlyCheck) -> None:
    """Refuse writes of the objects ``check`` names (once per check; an app's ``ready``)."""
    if check not in _read_only_checks:
        _read_only_checks.append(check)


def can_write(user, kind: str) -> bool:
    """Whether ``user`` may create, change or delete objects of ``kind``."""
    if user is None:
        return True
    if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return False
    return bool(user.is_staff) or kind in USER_WRITABLE_KINDS


def check_write(user, objects: Iterable) -> None:
    """Raise :class:`NotPermitted` naming every object ``user`` may not write, or
    :class:`ReadOnly` when some are read-only for everyone (mirrored from a cluster)."""
    objects = list(objects)
    refused = [str(o.key) for o in objects if not can_write(user, o.kind_name)]
    if refused:
        raise NotPermitted(refused)
    for check in _read_only_checks:
        message = check(objects)
        if message:
            raise ReadOnly(message)
