"""The upload page: manifests in, through ``services.manifests.import_texts``.

Files and pasted text are imported together, all or nothing: on invalid input the page
lists every problem (``FILE:DOC (Kind ns/name): path: message``) and nothing changes; after
a success its warnings (a selector reading an attribute no device has) follow the summary.
A request over the size limit (``DRA_MAX_UPLOAD_BYTES``) is refused before its body is read:
``console.limits.RequestSizeMiddleware`` calls :func:`too_large`, which shows the limit as a
form error.
Only staff see the page (docs/console-pages.md, "Links a user cannot use are hidden"): others
get 403, and their scripts write the kinds they may through the REST API.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect, render

from allocation.engine.manifests import InvalidManifests
from allocation.services.manifests import import_texts
from allocation.services.permissions import NotPermitted
from allocation.views.common import HtmxHttpRequest

__all__ = ["upload", "too_large", "PASTED_NAME"]

PASTED_NAME = "pasted.yaml"
"""The file name problems in pasted text are reported under."""


def _texts(request: HtmxHttpRequest) -> tuple[list[tuple[str, str]], list[str]]:
    """``(name, text)`` pairs from the uploaded files and the text box, and decoding errors."""
    texts, problems = [], []
    for upload in request.FILES.getlist("files"):
        try:
            texts.append((upload.name, upload.read().decode("utf-8")))
        except UnicodeDecodeError as exc:
            problems.append(f"{upload.name}: not UTF-8 text ({exc.reason} at byte {exc.start})")
    pasted = request.POST.get("text", "")
    if pasted.strip():
        texts.append((PASTED_NAME, pasted))
    return texts, problems


def _staff_only(request: HtmxHttpRequest) -> None:
    """Refuse a signed-in user who is not staff: the link is hidden from them, so is the page."""
    if not request.user.is_staff:
        raise PermissionDenied("only staff upload manifests; scripts use the REST API")


@login_required
def upload(request: HtmxHttpRequest) -> HttpResponse:
    """GET: the form. POST: import; redirect to the dashboard, or list every problem."""
    _staff_only(request)
    context: dict = {"problems": [], "text": ""}
    if request.method == "POST":
        texts, problems = _texts(request)
        context["text"] = request.POST.get("text", "")
        if not texts and not problems:
            problems = ["Choose at least one file or paste some YAML."]
        if not problems:
            try:
                result = import_texts(texts, user=request.user)
            except InvalidManifests as exc:
                problems = [str(p) for p in exc.problems]
            except NotPermitted as exc:
                problems = [str(exc)]
            else:
                messages.success(request, f"Imported: {result.summary()}.")
                for warning in result.warnings:  # valid, but probably not meant
                    messages.warning(request, f"Warning: {warning}")
                return redirect("allocation:dashboard")
        context["problems"] = problems
        return render(request, "allocation/upload.html", context, status=400)
    return render(request, "allocation/upload.html", context)


def too_large(request: HtmxHttpRequest, message: str) -> HttpResponse:
    """The form again, with ``message`` (the size limit) as its error: HTTP 413."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    _staff_only(request)
    return render(request, "allocation/upload.html", {"problems": [message], "text": ""},
                  status=413)


upload.too_large = too_large  # read by console.limits.RequestSizeMiddleware
