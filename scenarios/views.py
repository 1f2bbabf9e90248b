"""Scenario pages: list and create, the drag-and-drop planner, and its actions.

Views read and call :mod:`scenarios.services`; they never save models themselves. Every
action answers an htmx request with the re-rendered scenario body, or, when the engine
refuses a change, with the reason in the message area (``HX-Retarget``).
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django_htmx.http import HttpResponseClientRedirect, reswap, retarget

from allocation.engine import kinds
from allocation.views.common import HtmxHttpRequest
from scenarios import services
from scenarios.models import Scenario
from scenarios.presenters import PR_CLASSES, describe_change, page

__all__ = ["scenario_list", "scenario_create", "scenario_detail", "scenario_body",
           "scenario_change", "scenario_action", "scenario_export", "render_body",
           "PAGE_HEADER", "origin"]

PAGE_HEADER = "X-Scenario-Page"
"""The header naming the open page a request comes from (``static/js/scenario.js`` makes
one id per page and also tells its socket): that page gets the new body in the answer, so
the socket's push skips it (docs/scenarios.md, "Drag and drop")."""


def origin(request: HtmxHttpRequest) -> str:
    """The page id the request names (:data:`PAGE_HEADER`), or ``""``."""
    return request.headers.get(PAGE_HEADER, "")[:64]


def _visible(request: HtmxHttpRequest, pk: int) -> tuple[Scenario, bool]:
    scenario = get_object_or_404(Scenario, pk=pk)
    token = request.GET.get("token") or request.POST.get("token")
    if not services.can_view(request.user, scenario, token):
        raise Http404("no such scenario")
    return scenario, services.can_edit(request.user, scenario)


def _context(scenario: Scenario, editable: bool, message: str = "", match: str = "",
             group: str = "") -> dict:
    context: dict = {"scenario": scenario, "editable": editable, "message": message,
                     "change_url": reverse("scenarios:change", args=[scenario.pk]),
                     "pr_classes": PR_CLASSES,
                     "history": [(i, describe_change(c), i < scenario.position)
                                 for i, c in enumerate(scenario.changes)]}
    try:
        result, base = services.evaluation(scenario)
    except services.Refused as exc:
        context.update(view=None, error=str(exc), revision=None)
        return context
    context.update(view=page(result, match=match, group=group), error=scenario.evaluation_error,
                   revision=base.revision, stale=base.revision != scenario.base_revision)
    return context


def render_body(scenario: Scenario, editable: bool, oob: bool = False, message: str = "",
                request=None, user=None) -> str:
    """The scenario body fragment (also pushed over the WebSocket, then with ``oob``)."""
    from django.template.loader import render_to_string

    context = _context(scenario, editable, message) | {"oob": oob}
    if user is not None:
        context["user"] = user
    return render_to_string("scenarios/htmx/scenario_body.html", context, request=request)


@login_required
def scenario_list(request: HtmxHttpRequest) -> HttpResponse:
    mine = Scenario.objects.filter(owner=request.user)
    return render(request, "scenarios/list.html", {"scenarios": mine})


@login_required
def scenario_create(request: HtmxHttpRequest) -> HttpResponse:
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    try:
        scenario = services.create(request.user, request.POST.get("name", ""))
    except services.Refused as exc:
        mine = Scenario.objects.filter(owner=request.user)
        return render(request, "scenarios/list.html", {"scenarios": mine, "error": str(exc)},
                      status=400)
    return redirect("scenarios:detail", pk=scenario.pk)


@login_required
def scenario_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    scenario, editable = _visible(request, pk)
    if services.preparing():
        # a large cluster's first baseline in this process takes seconds: the page comes
        # at once, its body asks for the planner (``scenario_body``) and shows meanwhile
        # that it is being prepared (docs/scenarios.md, "The baseline")
        context = {"scenario": scenario, "editable": editable,
                   "body_url": f"{reverse('scenarios:body', args=[scenario.pk])}?"
                               f"{request.GET.urlencode()}"}
    else:
        context = _context(scenario, editable, match=request.GET.get("nodes", ""),
                           group=request.GET.get("group", ""))
    context["token"] = request.GET.get("token", "")
    context["share_url"] = request.build_absolute_uri(
        reverse("scenarios:detail", args=[scenario.pk]) + f"?token={scenario.share_token}")
    return render(request, "scenarios/detail.html", context)


@login_required
def scenario_body(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The planner body alone, as the detail page draws it (the placeholder's request)."""
    scenario, editable = _visible(request, pk)
    context = _context(scenario, editable, match=request.GET.get("nodes", ""),
                       group=request.GET.get("group", ""))
    context["token"] = request.GET.get("token", "")
    return render(request, "scenarios/htmx/scenario_body.html", context)


def change_from_form(data, scenario: Scenario) -> dict:
    """A change mapping from the planner's form fields (drag and drop and buttons alike)."""
    op = data.get("op", "")
    fields = ("pod", "node", "group", "kind", "object", "path", "expression", "strategy")
    change: dict = {"op": op} | {k: data[k] for k in fields if data.get(k)}
    if "count" in data:
        try:
            change["count"] = int(data["count"])
        except ValueError:
            change["count"] = data["count"]
    if op == "try-request":
        namespace, _, name = str(data.get("template", "")).rpartition("/")
        pr_class = data.get("pr_class") or PR_CLASSES[0]
        change = {"op": "add-object", "manifest": {
            "apiVersion": kinds.PROVISIONING_REQUEST.api_versions[0], "kind": "ProvisioningRequest",
            "metadata": {"name": f"what-if-{name}-{scenario.position + 1}",
                         "namespace": namespace or "default"},
            "spec": {"provisioningClassName": pr_class,
                     "podSets": [{"podTemplateRef": {"name": name},
                                  "count": change.get("count", 1)}]}}}
    return change


def _into_message_area(response: HttpResponse) -> HttpResponse:
    """Swap ``response`` into the page's message area instead of the htmx target."""
    return reswap(retarget(response, "#scenario-message"), "innerHTML")


def _answer(request, scenario: Scenario, message: str = "", refused: bool = False
            ) -> HttpResponse:
    if refused:
        return _into_message_area(render(request, "scenarios/htmx/message.html",
                                         {"message": message, "refused": True}))
    if not request.htmx:
        return redirect("scenarios:detail", pk=scenario.pk)
    return HttpResponse(render_body(scenario, True, message=message, request=request))


@login_required
def scenario_change(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    scenario, editable = _visible(request, pk)
    if not editable:
        raise PermissionDenied("only the scenario's owner may change it")
    change = change_from_form(request.POST, scenario)
    try:
        scenario = services.add_change(request.user, scenario, change, origin(request))
    except services.Refused as exc:
        return _answer(request, scenario, str(exc), refused=True)
    return _answer(request, scenario, describe_change(change))


@login_required
def scenario_action(request: HtmxHttpRequest, pk: int, action: str) -> HttpResponse:
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    scenario, _editable = _visible(request, pk)
    page_id = origin(request)
    try:
        if action == "undo":
            scenario = services.undo(request.user, scenario, page_id)
        elif action == "redo":
            scenario = services.redo(request.user, scenario, page_id)
        elif action == "rebase":
            scenario = services.rebase(request.user, scenario, page_id)
        elif action == "share":
            scenario = services.set_shared(request.user, scenario,
                                           request.POST.get("shared") == "on", page_id)
        elif action == "promote":
            scenario = services.promote(request.user, scenario, page_id)
            return _answer(request, scenario, "Promoted to the baseline.")
        elif action == "delete":
            services.delete(request.user, scenario)
            if request.htmx:  # the whole page goes, not a swap of its body
                return HttpResponseClientRedirect(reverse("scenarios:list"))
            return redirect("scenarios:list")
        else:
            raise Http404(f"no action {action!r}")
    except services.Refused as exc:
        return _answer(request, scenario, str(exc), refused=True)
    except services.Conflict as exc:
        return _into_message_area(render(request, "scenarios/htmx/conflict.html",
                                         {"conflict": exc}))
    return _answer(request, scenario)


@login_required
def scenario_export(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    scenario, _editable = _visible(request, pk)
    what = request.GET.get("what", "cluster")
    fmt = request.GET.get("format", "yaml")
    if what not in services.EXPORTS or fmt not in ("yaml", "json"):
        return HttpResponse("what must be cluster, changes or manifest, format yaml or json",
                            status=400, content_type="text/plain")
    try:
        text = services.export(scenario, what, fmt)
    except services.Refused as exc:
        return HttpResponse(str(exc), status=409, content_type="text/plain")
    response = HttpResponse(text, content_type="application/yaml" if fmt == "yaml"
                            else "application/json")
    response["Content-Disposition"] = (f'attachment; filename="scenario-{scenario.pk}-'
                                       f'{what}.{fmt}"')
    return response

