"""The admin's object form: the manifest as YAML a person writes, plus one field per CEL text.

The manifest is shown as :func:`allocation.services.editor.text_for` gives it (the text it
was last saved from, or Kubernetes' key order with multi-line selectors as ``|`` blocks), not
as the stored canonical JSON. Saving puts each edited CEL field back at its path in the text
as typed (comments and key order kept), compiles every CEL text, and stores the text
through the YAML editor's service (:func:`allocation.services.editor.save_text`: the
upload's validation). A problem at a CEL path is shown at that CEL field, any other problem
at the manifest with its line; warnings (a selector reading an attribute no device has) are
kept for the admin to show.
"""

from __future__ import annotations

from django import forms

from allocation.admin.cel import cel_sources, compile_errors
from allocation.engine.manifests.reader import read_text
from allocation.engine.manifests.round_trip import set_values
from allocation.services import objects as object_services
from allocation.services.editor import InvalidEdit, save_text, text_for

__all__ = ["ADMIN_FILE", "ManifestForm"]

ADMIN_FILE = "admin"
"""The file name the admin's manifest has in problems."""


def _field_name(index: int) -> str:
    return f"cel_{index}"


class ManifestForm(forms.ModelForm):
    """Edits one stored object; ``user`` and ``instance`` come from the admin."""

    manifest = forms.CharField(
        strip=False,
        widget=forms.Textarea(attrs={"rows": 24, "cols": 100, "spellcheck": "false",
                                     "class": "vLargeTextField manifest"}),
        help_text="The whole object as YAML (or JSON); comments are kept while you edit.")

    class Meta:
        fields: list[str] = []

    def __init__(self, *args, user=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        self.stored = None
        self.warnings: list[str] = []
        self.cel_paths: dict[str, str] = {}
        if self.instance.pk:
            doc = self.instance.manifest
            self.fields["manifest"].initial = text_for(self.instance)
            for index, item in enumerate(cel_sources(self.instance.KIND, doc)):
                name = _field_name(index)
                self.cel_paths[name] = item.path
                self.fields[name] = forms.CharField(
                    label=item.path, initial=item.source, required=True, strip=False,
                    widget=forms.Textarea(attrs={"rows": 3, "cols": 100,
                                                 "spellcheck": "false", "class": "cel"}),
                    help_text=f"CEL {item.kind}; compiled when you save.")

    def _text(self) -> str | None:
        """The manifest as typed, with the edited CEL fields put back at their paths."""
        text = self.cleaned_data.get("manifest") or ""
        edits = {path: self.cleaned_data[name] for name, path in self.cel_paths.items()
                 if name in self.changed_data and name in self.cleaned_data}
        if not edits:
            return text
        try:
            return set_values(text, edits)
        except LookupError as exc:
            name = next(n for n, p in self.cel_paths.items() if p == exc.args[0])
            self.add_error(name, f"the manifest no longer has {exc.args[0]}")
        except ValueError as exc:
            self.add_error("manifest", f"the CEL fields cannot be put back into the manifest: "
                                       f"{exc}")
        return None

    def _document(self, text: str) -> dict | None:
        """The one document of ``text`` for compiling its CEL; None when unreadable (the
        services then report why, at its line)."""
        documents = read_text(text)
        if len(documents) != 1 or documents[0].error is not None:
            return None
        return documents[0].data if isinstance(documents[0].data, dict) else None

    def _field_for(self, path: str) -> str:
        for name, cel_path in self.cel_paths.items():
            if path == cel_path:
                return name
        return "manifest"

    def clean(self):
        cleaned = super().clean()
        text = self._text()
        if text is None or self.errors:
            return cleaned
        failed = False
        for item in cel_sources(self._meta.model.KIND, self._document(text) or {}):
            for message in compile_errors(item):
                name = self._field_for(item.path)
                self.add_error(name, message if name != "manifest" else
                               f"{item.path}: {message}")
                failed = True
        if not failed:
            self._save_through_services(text)
        return cleaned

    def _save_through_services(self, text: str) -> None:
        row = self.instance if self.instance.pk else None
        try:
            result = save_text(text, self._meta.model, row, self.user, ADMIN_FILE)
        except InvalidEdit as exc:
            for problem in exc.problems:
                name = self._field_for(problem.path)
                self.add_error(name, problem.message if name != "manifest" else str(problem))
        except object_services.ObjectExists as exc:
            self.add_error("manifest", str(exc))
        else:
            self.stored = result.row
            self.warnings = [str(w) for w in result.warnings]

    def save(self, commit: bool = True):
        # The services stored the object during clean(); hand the admin the stored row.
        return self.stored
