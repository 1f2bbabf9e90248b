"""``/api/scenarios/``: scenarios, their changes, undo/redo, export, promotion.

A change that is not valid input (ill-formed, or it makes a document invalid) answers 400
naming the field; a change the engine refuses answers 409 with its reason; promotion against
a baseline that moved answers 409 with the objects that changed (the services' exceptions,
answered by ``console.api.exception_handler``).
"""

from __future__ import annotations

from django.db.models import Q
from django.http import HttpResponse, QueryDict
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from scenarios import services
from scenarios.api.serializers import ChangeSerializer, ScenarioSerializer
from scenarios.models import Scenario

__all__ = ["ScenarioViewSet"]


class ScenarioViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin,
                      mixins.CreateModelMixin, mixins.DestroyModelMixin,
                      viewsets.GenericViewSet):
    """Your scenarios (staff see all); shared ones with ``?token=``."""

    serializer_class = ScenarioSerializer
    permission_classes = [IsAuthenticated]
    queryset = Scenario.objects.all()  # the model, for the schema; get_queryset narrows it
    lookup_value_regex = r"\d+"

    def get_queryset(self):
        user = self.request.user
        if user.is_staff:
            return Scenario.objects.all()
        token = self.request.query_params.get("token")
        visible = Q(owner=user)
        if token:
            visible |= Q(shared=True, share_token=token)
        return Scenario.objects.filter(visible)

    def perform_create(self, serializer) -> None:
        try:
            serializer.instance = services.create(self.request.user,
                                                  serializer.validated_data.get("name", ""))
        except services.Refused as exc:  # a bad name is a 400 at its field, not a refusal
            raise ValidationError({"name": str(exc)}) from None

    def perform_destroy(self, instance: Scenario) -> None:
        services.delete(self.request.user, instance)

    def _done(self, scenario: Scenario) -> Response:
        return Response(ScenarioSerializer(scenario).data)

    @extend_schema(request=ChangeSerializer, responses=ScenarioSerializer)
    @action(detail=True, methods=["post"])
    def changes(self, request, pk=None) -> Response:
        """Apply one change; 400 if it is not valid, 409 with the reason if the engine
        refuses it."""
        scenario = self.get_object()
        data = request.data
        # a form's fields, one value each; a JSON body as it is (not an object: the
        # engine's reading of the change says so, as for any malformed change)
        change = data.dict() if isinstance(data, QueryDict) else data
        return self._done(services.add_change(request.user, scenario, change))

    @extend_schema(request=None, responses=ScenarioSerializer)
    @action(detail=True, methods=["post"])
    def undo(self, request, pk=None) -> Response:
        return self._done(services.undo(request.user, self.get_object()))

    @extend_schema(request=None, responses=ScenarioSerializer)
    @action(detail=True, methods=["post"])
    def redo(self, request, pk=None) -> Response:
        return self._done(services.redo(request.user, self.get_object()))

    @extend_schema(request=None, responses=ScenarioSerializer)
    @action(detail=True, methods=["post"])
    def rebase(self, request, pk=None) -> Response:
        return self._done(services.rebase(request.user, self.get_object()))

    @extend_schema(request=None, responses=ScenarioSerializer)
    @action(detail=True, methods=["post"])
    def promote(self, request, pk=None) -> Response:
        """Make the scenario the baseline (staff); 409 if the baseline moved since the fork."""
        return self._done(services.promote(request.user, self.get_object()))

    @extend_schema(request=None, responses={(200, "application/yaml"): str})
    @action(detail=True, methods=["get"])
    def export(self, request, pk=None) -> HttpResponse:
        """``?what=cluster|changes|manifest&output=yaml|json`` (``manifest``: the scenario's
        new or changed user objects, ready for ``kubectl apply``)."""
        what = request.query_params.get("what", "cluster")
        fmt = request.query_params.get("output", "yaml")
        if what not in services.EXPORTS or fmt not in ("yaml", "json"):
            return Response({"detail": "what must be cluster, changes or manifest, output "
                                       "yaml or json"},
                            status=status.HTTP_400_BAD_REQUEST)
        text = services.export(self.get_object(), what, fmt)
        return HttpResponse(text, content_type="application/yaml" if fmt == "yaml"
                            else "application/json")
