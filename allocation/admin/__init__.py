"""Django admin for what staff edit: classes (DeviceClasses too), parameters, drivers, slices
(v1 ResourceSlices too), node groups.

Every save and delete goes through the services (whole-cluster validation, one
transaction, broadcast); the manifest is YAML as a person writes it, CEL selectors and
templates compile on save, their errors shown at their own fields, other problems at their
line of the manifest (:mod:`allocation.admin.forms`). Only active staff get in (Django's
admin site), and every staff member may edit these kinds (`docs/console.md`, Permissions).
"""

from __future__ import annotations

from django.contrib import admin, messages
from rest_framework.authtoken.models import TokenProxy

from allocation import models
from allocation.admin.forms import ManifestForm
from allocation.engine.manifests import InvalidManifests
from allocation.services import objects as object_services
from allocation.services.permissions import can_write

__all__ = ["ManifestAdmin"]

# API tokens are created and revoked through allocation.services.accounts only (the account
# page, manage.py apitoken), not by DRF's own admin.
if admin.site.is_registered(TokenProxy):
    admin.site.unregister(TokenProxy)


class ManifestAdmin(admin.ModelAdmin):
    """An object edited as its manifest; listed by its filter columns."""

    form = ManifestForm
    list_display = ("name", "status", "updated_at")
    search_fields = ("name",)
    readonly_fields = ()

    def _cel_fields(self, obj) -> list[str]:
        if obj is None:
            return []
        from allocation.admin.cel import cel_sources

        return [f"cel_{i}" for i, _ in enumerate(cel_sources(obj.KIND, obj.manifest))]

    def get_form(self, request, obj=None, change=False, **kwargs):
        kwargs["fields"] = ["manifest"]
        base = super().get_form(request, obj, change=change, **kwargs)
        user = request.user

        class Form(base):
            def __init__(self, *args, **kw):
                super().__init__(*args, user=user, **kw)

        return Form

    def get_fieldsets(self, request, obj=None):
        cel = self._cel_fields(obj)
        sets = [(None, {"fields": ["manifest"]})]
        if cel:
            sets.append(("CEL", {"fields": cel, "description":
                                 "Selectors and templates; each is compiled on save."}))
        return sets

    @admin.display(description="drivers", ordering="drivers")
    def driver_list(self, obj) -> str:
        """The drivers column as words: the stored column is ``,a,b,`` for exact lookups."""
        return ", ".join(name for name in obj.drivers.split(",") if name)

    # -- permissions: active staff, for the kinds staff may write ------------------------
    def _staff(self, request) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def has_module_permission(self, request) -> bool:
        return self._staff(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return self._staff(request)

    def has_add_permission(self, request) -> bool:
        return self._staff(request) and can_write(request.user, self.model.KIND)

    def has_change_permission(self, request, obj=None) -> bool:
        return self.has_add_permission(request)

    def has_delete_permission(self, request, obj=None) -> bool:
        return self.has_add_permission(request)

    # -- writes go through the services --------------------------------------------------
    def save_model(self, request, obj, form, change) -> None:
        """Nothing to store: the form stored the object through the services; its warnings
        (a selector reading an attribute no device has) are shown with the admin's message."""
        for warning in getattr(form, "warnings", ()):
            self.message_user(request, f"Warning: {warning}", messages.WARNING)

    def save_related(self, request, form, formsets, change) -> None:
        """Stored objects have no related models."""

    def delete_model(self, request, obj) -> None:
        try:
            object_services.delete_object(obj, request.user)
        except InvalidManifests as exc:
            self.message_user(request, f"{obj} was not deleted: {exc}", messages.ERROR)

    def delete_queryset(self, request, queryset) -> None:
        for obj in queryset:
            self.delete_model(request, obj)


@admin.register(models.ResourceClass)
class ResourceClassAdmin(ManifestAdmin):
    list_display = ("name", "driver_name", "mode", "updated_at")
    list_filter = ("mode",)


@admin.register(models.ResourceClassParameters)
class ResourceClassParametersAdmin(ManifestAdmin):
    list_display = ("name", "driver_list", "updated_at")


@admin.register(models.ResourceClaimParameters)
class ResourceClaimParametersAdmin(ManifestAdmin):
    list_display = ("name", "namespace", "driver_list", "updated_at")
    list_filter = ("namespace",)


@admin.register(models.DriverSimulation)
class DriverSimulationAdmin(ManifestAdmin):
    list_display = ("name", "driver_name", "updated_at")


@admin.register(models.NodeResourceSlice)
class NodeResourceSliceAdmin(ManifestAdmin):
    list_display = ("name", "node_name", "driver_name", "model", "updated_at")
    list_filter = ("driver_name", "model")
    search_fields = ("name", "node_name")


@admin.register(models.NodeResourceCapacity)
class NodeResourceCapacityAdmin(ManifestAdmin):
    list_display = ("name", "node_name", "driver_name", "updated_at")
    list_filter = ("driver_name",)
    search_fields = ("name", "node_name")


@admin.register(models.DeviceClass)
class DeviceClassAdmin(ManifestAdmin):
    list_display = ("name", "extended_resource_name", "updated_at")


@admin.register(models.ResourceSlice)
class ResourceSliceAdmin(ManifestAdmin):
    list_display = ("name", "node_name", "driver_name", "pool_name", "updated_at")
    list_filter = ("driver_name",)
    search_fields = ("name", "node_name", "pool_name")


@admin.register(models.NodeGroup)
class NodeGroupAdmin(ManifestAdmin):
    list_display = ("name", "size", "updated_at")
