"""The admin's object form: the manifest as YAML plus one field per CEL text.

Saving reads the manifest, puts each (edited) CEL field back at its path, compiles every
CEL text, and stores the result through the services (the engine's full validation). A
problem at a CEL path is shown at that CEL field, any other problem at the manifest.
"""

from __future__ import annotations

import re

from django import forms

from allocation.admin.cel import cel_sources, compile_errors
from allocation.engine.manifests import InvalidManifests
from allocation.engine.manifests.reader import read_text
from allocation.engine.writer import dump
from allocation.services import objects as object_services

__all__ = ["ManifestForm", "set_path"]

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def set_path(doc: dict, path: str, value) -> None:
    """Set ``value`` at a field path such as ``filters[0].named.selector``."""
    steps = [int(i) if i else k for k, i in _STEP.findall(path)]
    target = doc
    for step in steps[:-1]:
        target = target[step]
    target[steps[-1]] = value


def _field_name(index: int) -> str:
    return f"cel_{index}"


class ManifestForm(forms.ModelForm):
    """Edits one stored object; ``user`` and ``instance`` come from the admin."""

    manifest = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 24, "cols": 100, "spellcheck": "false",
                                     "class": "vLargeTextField manifest"}),
        help_text="The whole object as YAML (or JSON).")

    class Meta:
        fields: list[str] = []

    def __init__(self, *args, user=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        self.stored = None
        self.cel_paths: dict[str, str] = {}
        if self.instance.pk:
            doc = self.instance.manifest
            self.fields["manifest"].initial = dump(doc, "yaml")
            for index, item in enumerate(cel_sources(self.instance.KIND, doc)):
                name = _field_name(index)
                self.cel_paths[name] = item.path
                self.fields[name] = forms.CharField(
                    label=item.path, initial=item.source, required=True, strip=False,
                    widget=forms.Textarea(attrs={"rows": 3, "cols": 100,
                                                 "spellcheck": "false", "class": "cel"}),
                    help_text=f"CEL {item.kind}; compiled when you save.")

    def _document(self) -> dict | None:
        documents = read_text(self.cleaned_data.get("manifest") or "")
        if len(documents) != 1:
            self.add_error("manifest", "the manifest must be exactly one object")
            return None
        [found] = documents
        if found.error is not None:
            self.add_error("manifest", f"{found.path or 'manifest'}: {found.error}"
                           if found.path else found.error)
            return None
        for path, message in found.problems:
            self.add_error("manifest", f"{path}: {message}")
        if found.problems:
            return None
        doc = found.data
        if not isinstance(doc, dict):
            self.add_error("manifest", "the manifest must be one object (a mapping)")
            return None
        for name, path in self.cel_paths.items():
            if name in self.changed_data:
                try:
                    set_path(doc, path, self.cleaned_data[name])
                except (KeyError, IndexError, TypeError):
                    self.add_error(name, f"the manifest no longer has {path}")
        return doc

    def _field_for(self, path: str) -> str:
        for name, cel_path in self.cel_paths.items():
            if path == cel_path:
                return name
        return "manifest"

    def clean(self):
        cleaned = super().clean()
        doc = self._document()
        if doc is None or self.errors:
            return cleaned
        failed = False
        for item in cel_sources(self._meta.model.KIND, doc):
            for message in compile_errors(item):
                name = self._field_for(item.path)
                self.add_error(name, message if name != "manifest" else
                               f"{item.path}: {message}")
                failed = True
        if failed:
            return cleaned
        self._save_through_services(doc)
        return cleaned

    def _save_through_services(self, doc: dict) -> None:
        text = dump(doc, "json")
        model = self._meta.model
        try:
            if self.instance.pk:
                self.stored = object_services.replace_object(self.instance, text, self.user,
                                                             "admin")
            else:
                self.stored = object_services.create_object(text, model, self.user, "admin")
        except InvalidManifests as exc:
            for problem in exc.problems:
                name = self._field_for(problem.path)
                self.add_error(name, problem.message if name != "manifest" else str(problem))
        except object_services.ObjectExists as exc:
            self.add_error("manifest", str(exc))

    def save(self, commit: bool = True):
        # The services stored the object during clean(); hand the admin the stored row.
        return self.stored
