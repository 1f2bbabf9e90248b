"""Manifests as people read them: YAML with syntax highlighting, and where problems are.

Every object's page shows its manifest (:func:`manifest_view`, a live fragment of the
object's page, or the YAML page of kinds without a page of their own); the editor shows an
edit that was refused line by line, each problem under its line (:func:`annotated_lines`).
Highlighting is Pygments' YAML lexer, on the server: the page needs no script for it, and
the CSS is ``static/css/pygments.css`` (``HtmlFormatter().get_style_defs``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight as _pygments
from pygments.formatters import HtmlFormatter
from pygments.lexers import YamlLexer

from allocation.engine.manifests.round_trip import editable_yaml
from allocation.engine.state import ClusterState
from allocation.models import KIND_MODELS, StoredObject, VendorObject
from allocation.services.editor import EDITABLE_KINDS

__all__ = ["highlight", "manifest_view", "yaml_url", "object_url", "model_slug", "model_for_slug",
           "AnnotatedLine", "annotated_lines"]

def highlight(text: str) -> SafeString:
    """``text`` as highlighted HTML (``<div class="highlight"><pre>...``); its text content is
    exactly ``text``, so a copy button copies the manifest."""
    return mark_safe(_pygments(text, YamlLexer(), HtmlFormatter(cssclass="highlight")))


def model_slug(model: type[StoredObject]) -> str:
    """A model's name in the YAML pages' URLs (``nodegroup``, ``resourceslice``)."""
    return model._meta.model_name


def model_for_slug(slug: str) -> type[StoredObject] | None:
    """The model a YAML page URL names (vendor objects have no YAML page)."""
    for model in KIND_MODELS.values():
        if model_slug(model) == slug and model is not VendorObject:
            return model
    return None


def yaml_url(model: type[StoredObject], namespace: str | None, name: str,
             edit: bool = False) -> str:
    """The YAML page (or editor) of one stored object."""
    args = [model_slug(model), *([namespace] if model.NAMESPACED else []), name]
    return reverse("allocation:yaml_edit" if edit else "allocation:yaml", args=args)


def _model_of(obj) -> type[StoredObject] | None:
    for model in KIND_MODELS.values():
        if model.KIND_SPEC is obj.kind_spec:
            return model
    return None


def manifest_view(state: ClusterState, kind: str, namespace: str | None,
                  name: str) -> dict | None:
    """The manifest of one object of ``state`` as YAML: ``yaml`` (the text), ``html``
    (highlighted), ``url`` (its YAML page), ``edit_url`` (its editor) and ``editable``
    (whether staff edit its kind in the editor); None when the state has no such object."""
    obj = state.get(kind, namespace, name)
    if obj is None:
        return None
    model = _model_of(obj)
    try:
        text = editable_yaml(obj.to_manifest())
    except RecursionError:  # a document nested too deeply to copy (docs/console.md, Failures)
        text = "# nested too deeply to be shown as YAML\n"
    return {"yaml": text, "html": highlight(text),
            "url": yaml_url(model, obj.namespace, obj.name) if model else "",
            "edit_url": yaml_url(model, obj.namespace, obj.name, edit=True) if model else "",
            "editable": model is not None and model.KIND in EDITABLE_KINDS}


@dataclass
class AnnotatedLine:
    """One line of an edited text: its number, highlighted HTML, and the problems and
    warnings about it."""

    number: int
    html: SafeString
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def annotated_lines(text: str, problems=(), warnings=()) -> list[AnnotatedLine]:
    """``text`` line by line, highlighted, each line with the problems (and warnings) whose
    ``line`` it is (:class:`allocation.services.editor.LineProblem`); problems without a line
    go to the first line."""
    # Pygments closes its spans at every line break (a block scalar's token too), so its
    # output splits into source lines; ``stripnl=False`` keeps leading blank lines.
    html = _pygments(text, YamlLexer(stripnl=False), HtmlFormatter(nowrap=True))
    parts = html.split("\n")
    count = max(len(text.splitlines()), 1)
    lines = [AnnotatedLine(number, mark_safe(parts[number - 1] if number <= len(parts) else ""))
             for number in range(1, count + 1)]
    for items, attribute in ((problems, "problems"), (warnings, "warnings")):
        for item in items:
            index = min(max((item.line or 1) - 1, 0), len(lines) - 1)
            getattr(lines[index], attribute).append(
                f"{item.path}: {item.message}" if item.path else item.message)
    return lines


#: Kinds with a page of their own (the live page's URL name); others' page is their YAML page.
_OBJECT_PAGES = {"Node": "node", "Pod": "pod", "ResourceClaim": "claim",
                 "ProvisioningRequest": "provisioning_request", "DeviceClass": "device_class",
                 "ResourceSlice": "resource_slice"}


def object_url(model: type[StoredObject], namespace: str | None, name: str) -> str:
    """The page of one stored object: its own page, or its YAML page."""
    page = _OBJECT_PAGES.get(model.KIND)
    if page is None:
        return yaml_url(model, namespace, name)
    return reverse(f"allocation:{page}", args=[*([namespace] if model.NAMESPACED else []),
                                               name])
