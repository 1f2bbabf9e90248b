"""API viewsets: one per kind, plus vendor objects and Events.

Addresses are kubectl-like: ``/api/<plural>/<name>/`` for cluster-scoped kinds,
``/api/<plural>/<namespace>/<name>/`` for namespaced ones (``<name>`` alone means the
``default`` namespace) and ``/api/vendorobjects/<kind>.<group>/<namespace>/<name>/``.
Lists filter by ``node``, ``driver``, ``class``, ``namespace`` and ``status`` where the
kind has them; a filter a kind does not have is a 400, not silently ignored.
Every write goes through :mod:`allocation.services.objects`; its refusals (invalid
manifests, permissions, an object that exists) become answers in ``console.api``.
"""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import permissions, renderers, status, viewsets
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.response import Response

from allocation.api.serializers import (
    PARSERS,
    ManifestListSerializer,
    ManifestSerializer,
    ManifestText,
    ProblemsSerializer,
    YAMLRenderer,
)
from allocation.engine.kinds import V1_KINDS
from allocation.engine.writer import as_list
from allocation.models import KIND_MODELS, Event, StoredObject, VendorObject, models_of_kind
from allocation.services import objects as object_services
from allocation.services.permissions import can_write

__all__ = ["KindPermission", "ManifestViewSet", "VIEWSETS", "FILTER_NAMES"]

FILTER_NAMES = ("node", "driver", "class", "namespace", "status", "kind", "group", "name")


class KindPermission(permissions.BasePermission):
    """Signed-in users read; writes need :func:`can_write` for the viewset's kind."""

    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        if request.method in permissions.SAFE_METHODS:
            return True
        return can_write(request.user, view.model.KIND or "vendor object")


class ManifestViewSet(viewsets.GenericViewSet):
    """The objects of one kind; subclasses set ``model``."""

    model: type[StoredObject] = StoredObject
    serializer_class = ManifestSerializer
    permission_classes = [KindPermission]
    parser_classes = PARSERS
    renderer_classes = [renderers.JSONRenderer, YAMLRenderer, renderers.BrowsableAPIRenderer]
    lookup_field = "ref"
    lookup_value_regex = r"[^/]+(?:/[^/]+)?"

    def get_queryset(self):
        return self.model.objects.order_by("position")

    # -- reading ------------------------------------------------------------------------
    def filter_queryset(self, queryset):
        for name in FILTER_NAMES:
            value = self.request.query_params.get(name)
            if value is None:
                continue
            spec = self.model.FILTERS.get(name)
            if spec is None:
                usable = ", ".join(sorted(self.model.FILTERS)) or "none"
                raise ValidationError({name: f"{self.model.__name__} cannot be filtered by "
                                             f"{name}; its filters: {usable}"})
            column, lookup = spec
            wanted = f",{value}," if lookup == "contains" else value
            queryset = queryset.filter(**{f"{column}__{lookup}": wanted})
        return queryset

    def _split_ref(self, ref: str) -> dict:
        parts = ref.split("/")
        if self.model.NAMESPACED:
            namespace, name = parts if len(parts) == 2 else ("default", parts[0])
            return {"namespace": namespace, "name": name}
        if len(parts) != 1:
            raise Http404(f"{self.model.KIND} is cluster-scoped: address it by name alone")
        return {"namespace": "", "name": parts[0]}

    def get_object(self) -> StoredObject:
        row = self.get_queryset().filter(**self._split_ref(self.kwargs["ref"])).first()
        if row is None:
            raise Http404(f"{self.model.KIND} {self.kwargs['ref']} not found")
        return row

    @extend_schema(responses=ManifestListSerializer, parameters=[
        OpenApiParameter(n, OpenApiTypes.STR, description="filter (where the kind has it)")
        for n in FILTER_NAMES])
    def list(self, request, *args, **kwargs) -> Response:
        rows = self.filter_queryset(self.get_queryset())
        return Response(as_list([row.manifest for row in rows]))

    def retrieve(self, request, *args, **kwargs) -> Response:
        return Response(self.get_object().manifest)

    # -- writing ------------------------------------------------------------------------
    def _body(self, request) -> ManifestText:
        body = request.data
        if not isinstance(body, ManifestText):
            raise ParseError("send the manifest as application/yaml or application/json")
        return body

    @extend_schema(request=ManifestSerializer, responses={201: ManifestSerializer,
                                                          400: ProblemsSerializer})
    def create(self, request, *args, **kwargs) -> Response:
        body = self._body(request)
        row = object_services.create_object(body.text, self.model, request.user, body.file)
        return Response(row.manifest, status=status.HTTP_201_CREATED)

    @extend_schema(request=ManifestSerializer, responses={200: ManifestSerializer,
                                                          400: ProblemsSerializer})
    def update(self, request, *args, **kwargs) -> Response:
        body = self._body(request)
        row = object_services.replace_object(self.get_object(), body.text, request.user,
                                             body.file)
        return Response(row.manifest)

    @extend_schema(responses={204: None, 400: ProblemsSerializer})
    def destroy(self, request, *args, **kwargs) -> Response:
        object_services.delete_object(self.get_object(), request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class VendorObjectViewSet(ManifestViewSet):
    """Vendor objects, addressed as ``<kind>.<group>/<namespace>/<name>``."""

    model = VendorObject
    lookup_value_regex = r"[^/]+/[^/]+/[^/]+"

    def _split_ref(self, ref: str) -> dict:
        kind_group, namespace, name = ref.split("/")
        kind, _, group = kind_group.partition(".")
        return {"kind": kind, "api_group": group, "namespace": namespace, "name": name}


def _plural(kind: str) -> str:
    lower = kind.lower()
    if lower.endswith("ss"):
        return lower + "es"
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower if lower.endswith("parameters") else lower + "s"


def _prefix(model: type[StoredObject]) -> str:
    """The endpoint of a kind: its plural, and ``-v1`` for the resource.k8s.io/v1 kinds whose
    name a seed kind has too (``/api/resourceclaims-v1/``): one identity, two shapes
    (docs/v1.md, "The console")."""
    twins = len(models_of_kind(model.KIND)) > 1
    return _plural(model.KIND) + ("-v1" if twins and model.KIND_SPEC in V1_KINDS else "")


def _viewset(model: type[StoredObject]) -> type[ManifestViewSet]:
    methods = ["get", "post", "put", "delete", "head", "options"]
    if model is Event:
        methods = ["get", "delete", "head", "options"]
    cls = type(f"{model.__name__}ViewSet", (ManifestViewSet,), {
        "model": model, "http_method_names": methods,
        "__doc__": f"{model.KIND} objects. {model.__doc__ or ''}".strip()})
    return extend_schema_view()(cls)


VIEWSETS: dict[str, type[ManifestViewSet]] = {
    _prefix(model): _viewset(model) for model in KIND_MODELS.values()}
VIEWSETS["vendorobjects"] = VendorObjectViewSet
VIEWSETS["events"] = _viewset(Event)
