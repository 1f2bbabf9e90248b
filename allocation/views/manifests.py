"""YAML pages: any stored object's manifest, and the editor staff change it in.

``/yaml/`` lists the objects staff edit (``services.editor.EDITABLE_KINDS``);
``/yaml/<kind>/[<namespace>/]<name>/`` shows one object's manifest highlighted, with a copy
button; ``/edit/<kind>/[<namespace>/]<name>/`` is the editor: the manifest as YAML a person
writes, or the text it was last saved from with the current document merged in
(``services.editor.text_for``), saved through ``services.editor.save_text`` (the
upload's validation; each problem shown under its line). The view only reads; the service
writes (docs/console.md, "YAML views and the editor").
"""

from __future__ import annotations

import hashlib

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render

from allocation.models import KIND_MODELS, StoredObject
from allocation.presenters.manifest import (
    annotated_lines,
    highlight,
    model_for_slug,
    object_url,
    yaml_url,
)
from allocation.services.editor import (
    EDITABLE_KINDS,
    InvalidEdit,
    LineProblem,
    save_text,
    text_for,
)
from allocation.services.permissions import NotPermitted, can_write
from allocation.views.common import HtmxHttpRequest

__all__ = ["yaml_index", "yaml_page", "yaml_edit"]


def _row(kind: str, namespace: str | None, name: str) -> StoredObject:
    model = model_for_slug(kind)
    if model is None or (namespace is not None) != model.NAMESPACED:
        raise Http404(f"no such kind: {kind}")
    row = model.objects.filter(namespace=namespace or "", name=name).first()
    if row is None:
        raise Http404(f"no {model.KIND} {namespace + '/' if namespace else ''}{name}")
    return row


def _fingerprint(row: StoredObject) -> str:
    return hashlib.sha256(row.document.encode()).hexdigest()


@login_required
def yaml_index(request: HtmxHttpRequest) -> HttpResponse:
    """The objects staff edit as YAML, by kind."""
    kinds = [{"kind": model.KIND,
              "rows": [{"ref": row.ref, "url": yaml_url(model, row.namespace, row.name),
                        "edit_url": yaml_url(model, row.namespace, row.name, edit=True)}
                       for row in model.objects.order_by("position").only(
                           "namespace", "name")]}
             for model in KIND_MODELS.values() if model.KIND in EDITABLE_KINDS]
    return render(request, "allocation/yaml_index.html", {"kinds": kinds})


@login_required
def yaml_page(request: HtmxHttpRequest, kind: str, name: str,
              namespace: str | None = None) -> HttpResponse:
    """One stored object's manifest, highlighted, with a copy button."""
    row = _row(kind, namespace, name)
    text = text_for(row)
    model = type(row)
    return render(request, "allocation/yaml_page.html", {
        "row": row, "kind": model.KIND, "manifest": {
            "yaml": text, "html": highlight(text), "url": yaml_url(model, namespace, name),
            "edit_url": yaml_url(model, namespace, name, edit=True),
            "editable": model.KIND in EDITABLE_KINDS},
        "object_url": object_url(model, namespace, name)})


@login_required
def yaml_edit(request: HtmxHttpRequest, kind: str, name: str,
              namespace: str | None = None) -> HttpResponse:
    """GET: the editor. POST: save through the services, then go to the object's page with
    the warnings; or show the text again with every problem under its line (HTTP 400)."""
    row = _row(kind, namespace, name)
    model = type(row)
    if not (request.user.is_staff and model.KIND in EDITABLE_KINDS
            and can_write(request.user, model.KIND)):
        raise PermissionDenied("only staff edit this kind as YAML")
    context = {"row": row, "kind": model.KIND, "text": text_for(row),
               "fingerprint": _fingerprint(row), "problems": [], "lines": [],
               "object_url": object_url(model, namespace, name)}
    if request.method != "POST":
        return render(request, "allocation/yaml_edit.html", context)
    text = request.POST.get("text", "")
    context["text"] = text
    if request.POST.get("fingerprint") != context["fingerprint"]:
        # Saving would silently undo what changed meanwhile (the worker, another editor).
        problems = [LineProblem(None, "", "changed since you opened the editor; your text is "
                                "kept below: reload the page to start from the current "
                                "manifest", f"{model.KIND} {row.ref}: changed meanwhile")]
    else:
        try:
            result = save_text(text, model, row, request.user)
        except InvalidEdit as exc:
            problems = exc.problems
        except NotPermitted as exc:
            raise PermissionDenied(str(exc)) from None
        else:
            messages.success(request, f"Saved {model.KIND} {result.row.ref}.")
            for warning in result.warnings:
                messages.warning(request, f"Warning: {warning}")
            return redirect(object_url(model, namespace, name))
    context["problems"] = problems
    context["lines"] = annotated_lines(text, problems)
    return render(request, "allocation/yaml_edit.html", context, status=400)
