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

from urllib.parse import parse_qs, urlsplit

from django.db.models import Exists, OuterRef
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import permissions, renderers, status, viewsets
from rest_framework.exceptions import NotFound, ParseError, ValidationError
from rest_framework.pagination import CursorPagination
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
from allocation.models import (
    KIND_MODELS,
    Event,
    Node,
    Pod,
    ResourceClaim,
    ResourceClaimV1,
    StoredObject,
    VendorObject,
    models_of_kind,
)
from allocation.presenters.filters import LIST_FILTERS
from allocation.presenters.lists import list_queryset
from allocation.services import objects as object_services
from allocation.services.permissions import can_write

__all__ = ["KindPermission", "ManifestViewSet", "ListPagination", "VIEWSETS", "FILTER_NAMES",
           "PAGE_SIZE", "MAX_PAGE_SIZE"]

FILTER_NAMES = ("node", "driver", "class", "namespace", "status", "kind", "group", "name")
PAGE_SIZE = 500  # kubectl's --chunk-size default
MAX_PAGE_SIZE = 5000

_LIST_OF_MODEL: dict[type[StoredObject], str] = {
    Node: "nodes", Pod: "pods", ResourceClaim: "claims", ResourceClaimV1: "claims",
    Event: "events"}
"""Kinds whose API list filters with a list's FilterSet (``presenters/filters.py``)."""


class ListPagination(CursorPagination):
    """Cursor pagination in document order, answered as a ``v1 List``.

    ``?limit=`` (default 500, at most 5000) objects per page; ``metadata.continue`` is the
    cursor of the next page (pass it as ``?cursor=``) and ``metadata.next`` its URL, both
    absent on the last page, as Kubernetes lists do with ``continue``.
    """

    ordering = "position"
    page_size = PAGE_SIZE
    page_size_query_param = "limit"
    max_page_size = MAX_PAGE_SIZE

    def decode_cursor(self, request):
        """DRF's cursor, refused as invalid (404, as DRF refuses a cursor it cannot decode)
        when its position is not a stored position: it is compared with the integer column
        ``position`` (an edited ``p=abc`` was a 500)."""
        cursor = super().decode_cursor(request)
        if cursor is not None and cursor.position is not None:
            try:
                int(cursor.position)
            except ValueError:
                raise NotFound(self.invalid_cursor_message) from None
        return cursor

    def get_paginated_response(self, data) -> Response:
        listing = as_list(data)
        next_url = self.get_next_link()
        metadata = {}
        if next_url:
            metadata["continue"] = parse_qs(urlsplit(next_url).query)[self.cursor_query_param][0]
            metadata["next"] = next_url
        previous = self.get_previous_link()
        if previous:
            metadata["previous"] = previous
        return Response({"apiVersion": listing["apiVersion"], "kind": listing["kind"],
                         "metadata": metadata, "items": listing["items"]})

    def get_paginated_response_schema(self, schema: dict) -> dict:
        return {"type": "object", "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "metadata": {"type": "object", "properties": {
                "continue": {"type": "string"}, "next": {"type": "string"},
                "previous": {"type": "string"}}},
            "items": schema}}


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
    pagination_class = ListPagination

    def get_queryset(self):
        return self.model.objects.order_by("position")

    # -- reading ------------------------------------------------------------------------
    def filter_queryset(self, queryset):
        listed = _LIST_OF_MODEL.get(self.model)
        if listed is not None:
            return self._filter_with(listed, queryset)
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

    def _filter_with(self, listed: str, queryset):
        """Filter with the list's FilterSet, as its page does: on the read model's rows
        (Events: their own rows), then keep the stored objects those rows are about."""
        filterset_class = LIST_FILTERS[listed]
        params = self.request.query_params
        for name in FILTER_NAMES:
            if name in params and name not in filterset_class.base_filters:
                usable = ", ".join(sorted(filterset_class.base_filters))
                raise ValidationError({name: f"{self.model.__name__} cannot be filtered by "
                                             f"{name}; its filters: {usable}"})
        wanted = [n for n in filterset_class.base_filters if n in params]
        if not wanted:
            return queryset
        filterset = filterset_class({n: params[n] for n in wanted},
                                    queryset=list_queryset(listed))
        if not filterset.is_valid():
            raise ValidationError({n: " ".join(e) for n, e in filterset.errors.items()})
        rows = filterset.qs
        if self.model is Event:
            return queryset.filter(pk__in=rows.values("pk"))
        same = {"name": OuterRef("name")}
        if self.model.NAMESPACED:
            same["namespace"] = OuterRef("namespace")
        return queryset.filter(Exists(rows.order_by().filter(**same)))

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
        *(OpenApiParameter(n, OpenApiTypes.STR, description="filter (where the kind has it)")
          for n in FILTER_NAMES),
        OpenApiParameter("q", OpenApiTypes.STR, description="search names (nodes, pods, "
                         "claims, Events)"),
        OpenApiParameter("limit", OpenApiTypes.INT, description=f"objects per page "
                         f"(default {PAGE_SIZE}, at most {MAX_PAGE_SIZE})"),
        OpenApiParameter("cursor", OpenApiTypes.STR, description="the page: a previous "
                         "answer's metadata.continue")])
    def list(self, request, *args, **kwargs) -> Response:
        rows = self.filter_queryset(self.get_queryset())
        page = self.paginator.paginate_queryset(rows, request, view=self)
        return self.paginator.get_paginated_response([row.manifest for row in page])

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
