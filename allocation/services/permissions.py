"""Who may write which kinds (`docs/console.md`, Permissions).

Staff may write everything. Other signed-in users may write the kinds a cluster's users
create themselves: claims, pods and ProvisioningRequests, and the templates those need
(ResourceClaimTemplates, PodTemplates). Infrastructure (nodes, slices, capacities, node
groups), classes, parameters and drivers are staff-only; so are vendor objects (they are
class and claim parameters too) and Events. Everyone signed in reads everything.
``user=None`` means the system itself (management commands, the worker).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.core.exceptions import PermissionDenied

__all__ = ["USER_WRITABLE_KINDS", "NotPermitted", "can_write", "check_write"]

USER_WRITABLE_KINDS = frozenset({"ResourceClaim", "Pod", "ProvisioningRequest",
                                 "ResourceClaimTemplate", "PodTemplate"})


class NotPermitted(PermissionDenied):
    """The user may not write some of the objects; ``refused`` names them."""

    def __init__(self, refused: list[str]) -> None:
        self.refused = refused
        super().__init__("only staff may write " + ", ".join(refused))


def can_write(user, kind: str) -> bool:
    """Whether ``user`` may create, change or delete objects of ``kind``."""
    if user is None:
        return True
    if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return False
    return bool(user.is_staff) or kind in USER_WRITABLE_KINDS


def check_write(user, objects: Iterable) -> None:
    """Raise :class:`NotPermitted` naming every object ``user`` may not write."""
    refused = [str(o.key) for o in objects if not can_write(user, o.kind_name)]
    if refused:
        raise NotPermitted(refused)
