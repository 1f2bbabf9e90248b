"""The YAML editor's writes: one object's manifest as a person edited it.

The text goes through the same path as every other write of one object
(:func:`allocation.services.objects.create_object` / ``replace_object``: the engine's loader,
so schema and CEL, then the whole-cluster checks of :mod:`allocation.services.writes`), and
the problems come back placed at the line of the text where their field is
(:func:`allocation.engine.manifests.round_trip.lines_of`). After a save, selectors reading
an attribute no device has come back as warnings (:mod:`allocation.services.warnings`).
The saved text itself is kept (:class:`allocation.models.ManifestSource`), so the next edit
opens with the person's comments, key order and block style (:func:`text_for`).
Used by the editor page and the admin (docs/console.md, "YAML views and the editor").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import transaction

from allocation.engine.manifests import InvalidManifests, Problem
from allocation.engine.manifests.round_trip import editable_yaml, lines_of, merge_document
from allocation.models import ManifestSource, StoredObject
from allocation.services import objects as object_services
from allocation.services.warnings import attribute_warnings

__all__ = ["EDITABLE_KINDS", "EDITOR_FILE", "LineProblem", "InvalidEdit", "EditResult",
           "save_text", "text_for", "at_lines"]

EDITABLE_KINDS = frozenset({
    "Node", "NodeGroup", "DriverSimulation", "ResourceClass", "ResourceClassParameters",
    "ResourceClaimParameters", "NodeResourceSlice", "NodeResourceCapacity", "DeviceClass",
    "ResourceSlice"})
"""What staff edit in the YAML editor: the cluster's infrastructure (nodes, node groups,
drivers, slices, capacities) and classes with their parameters; the admin edits the same
kinds but nodes. Workloads (pods, claims) come and go through upload and the API."""

EDITOR_FILE = "editor.yaml"
"""The file name the editor's text has in problems."""

_SYNTAX_LINE = re.compile(r"\bat line (\d+)")


@dataclass(frozen=True)
class LineProblem:
    """A problem (or warning) and the line of the edited text it is about (None: the
    whole text)."""

    line: int | None
    path: str
    message: str
    text: str  # the one-line problem, FILE:DOC (Kind ns/name): path: message

    def __str__(self) -> str:
        return f"line {self.line}: {self.text}" if self.line else self.text


class InvalidEdit(Exception):
    """The text was refused; ``problems`` are in input order, each with its line."""

    def __init__(self, problems: list[LineProblem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass
class EditResult:
    """A saved edit: the stored row and the warnings about it (each with its line)."""

    row: StoredObject
    warnings: list[LineProblem]


def at_lines(text: str, problems: list[Problem], file: str = EDITOR_FILE) -> list[LineProblem]:
    """``problems`` with the line of ``text`` each is about: its field path followed through
    the text, or the line a YAML syntax error names. Problems of other files (stored objects
    the edit conflicts with) have no line."""
    ours = [p for p in problems if p.file == file]
    lines = iter(lines_of(text, [p.path for p in ours]))
    out = []
    for problem in problems:
        line = next(lines) if problem.file == file else None
        syntax = _SYNTAX_LINE.search(problem.message) if not problem.path else None
        if syntax and problem.file == file:
            line = int(syntax.group(1))
        out.append(LineProblem(line, problem.path, problem.message, str(problem)))
    return out


def text_for(row: StoredObject) -> str:
    """The YAML to edit ``row`` in: the text it was last saved from in the editor, with the
    stored document merged in (comments, key order and style kept; whatever changed since
    shows), or the document written afresh for people."""
    source = ManifestSource.objects.filter(model=type(row)._meta.model_name,
                                           namespace=row.namespace, name=row.name).first()
    if source is None:
        return editable_yaml(row.manifest)
    return merge_document(source.text, row.manifest)


def save_text(text: str, model: type[StoredObject], row: StoredObject | None = None,
              user=None, file: str = EDITOR_FILE) -> EditResult:
    """Create (``row`` None) or replace ``row`` with the one object ``text`` holds
    (``file``: its name in problems).

    Returns the stored row and the warnings. Raises :class:`InvalidEdit` (nothing written;
    every problem at its line), ``NotPermitted``, or ``ObjectExists`` when creating an
    object whose identity is taken.
    """
    try:
        with transaction.atomic():
            if row is None:
                stored = object_services.create_object(text, model, user, file)
            else:
                stored = object_services.replace_object(row, text, user, file)
            ManifestSource.objects.update_or_create(
                model=model._meta.model_name, namespace=stored.namespace, name=stored.name,
                defaults={"text": text})
    except InvalidManifests as exc:
        raise InvalidEdit(at_lines(text, exc.problems, file)) from None
    obj = object_services.parse_one(text, model, file)
    return EditResult(stored, at_lines(text, attribute_warnings([obj]), file))
