"""The REST API's one exception handler (``REST_FRAMEWORK["EXCEPTION_HANDLER"]``).

Views return a ``Response`` and let the services' exceptions through; this module turns
each into its answer (docs/console.md, "REST API"; docs/scenarios.md):

* ``InvalidManifests`` (the engine's loader, whole-cluster checks) -> 400
  ``{"problems": [...]}``, every problem in the project's format;
* ``NotPermitted`` (``allocation.services.permissions``) -> 403 ``{"detail": ...}``;
* ``ObjectExists`` (a create of a stored object) -> 409 ``{"detail": ...}``;
* a scenario change that is not valid input (``scenarios.services.Invalid``) -> 400, one the
  engine refuses (``Refused``) -> 409, both ``{"refused": ...}``; a promotion against a
  baseline that moved (``Conflict``) -> 409 ``{"refused": ..., "changed": [...]}``;
* everything else: DRF's own handler.
"""

from __future__ import annotations

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from allocation.engine.manifests import InvalidManifests
from allocation.services.objects import ObjectExists
from allocation.services.permissions import NotPermitted
from scenarios import services as scenario_services

__all__ = ["exception_handler"]


def _answer(exc: Exception) -> Response | None:
    if isinstance(exc, InvalidManifests):
        return Response({"problems": [str(p) for p in exc.problems]},
                        status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, NotPermitted):
        return Response({"detail": str(exc)}, status=status.HTTP_403_FORBIDDEN)
    if isinstance(exc, ObjectExists):
        return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, scenario_services.Conflict):
        return Response({"refused": str(exc), "changed": exc.changed},
                        status=status.HTTP_409_CONFLICT)
    if isinstance(exc, scenario_services.Invalid):
        return Response({"refused": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, scenario_services.Refused):
        return Response({"refused": str(exc)}, status=status.HTTP_409_CONFLICT)
    return None


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """The response for ``exc`` raised by an API view, or None to let it propagate."""
    response = _answer(exc)
    if response is None:
        return drf_exception_handler(exc, context)
    set_rollback()
    return response
