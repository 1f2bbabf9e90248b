"""Importing and exporting manifests: the ``import``/``export`` commands, upload and API.

Import reads documents exactly as ``simulate`` does (``load_texts``: same validation, same
``FILE:DOC (Kind ns/name): field.path: message`` problems), then checks the whole cluster
the import leads to with the engine, and saves it in one transaction: on any problem
:class:`InvalidManifests` is raised and nothing changes. Objects already stored under the
same identity are replaced where they stand in document order; new ones are appended.

Export writes every stored object in document order, then the Events, as a ``v1 List``
through the engine's deterministic writer: the same output format as ``simulate``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import transaction

from allocation.engine.manifests import InvalidManifests, Problem, load_files, load_texts
from allocation.engine.writer import as_list, dump
from allocation.services.permissions import check_write
from allocation.services.profile import console_profile
from allocation.services.store import Identity, event_rows, stored_rows
from allocation.services.warnings import attribute_warnings
from allocation.services.writes import WriteResult, write

__all__ = ["ImportResult", "import_texts", "import_files", "export_text", "export_documents",
           "InvalidManifests"]


@dataclass
class ImportResult:
    """What an import did (identities are ``(group, kind, namespace, name)``); ``warnings``
    about what it wrote (:mod:`allocation.services.warnings`), in the problem format."""

    created: list[Identity]
    updated: list[Identity]
    unchanged: list[Identity]
    deleted: list[Identity]
    revision: int
    warnings: list[Problem] = field(default_factory=list)

    @property
    def objects(self) -> int:
        return len(self.created) + len(self.updated) + len(self.unchanged)

    def summary(self) -> str:
        return (f"{len(self.created)} created, {len(self.updated)} updated, "
                f"{len(self.unchanged)} unchanged, {len(self.deleted)} deleted "
                f"(revision {self.revision})")

    @classmethod
    def of(cls, result: WriteResult, objects: Sequence = (),
           loading: Sequence[Problem] = ()) -> ImportResult:
        """``loading``: the load's own warnings (fields dropped for a disabled gate, what
        is not simulated), said before those about the objects written."""
        return cls(result.created, result.updated, result.unchanged, result.deleted,
                   result.revision, [*loading, *attribute_warnings(objects)])


def import_texts(texts: Sequence[tuple[str, str]], user=None,
                 replace: bool = False) -> ImportResult:
    """Import ``(file name, text)`` pairs into the stored cluster.

    ``replace`` makes the stored cluster exactly the input (everything else is deleted).
    ``user`` (None: the system) must be allowed to write every kind given
    (:mod:`allocation.services.permissions`). Raises :class:`InvalidManifests` (every
    problem, nothing written) or ``NotPermitted``.
    """
    loaded = load_texts(list(texts), console_profile())
    check_write(user, [*loaded.objects, *loaded.events])
    return ImportResult.of(write(loaded.objects, loaded.events, replace_all=replace),
                           loaded.objects, loaded.warnings)


def export_documents(events: bool = True) -> list[dict]:
    """Every stored document in document order, then the Events in order (none when
    ``events`` is false: a scenario's baseline, which starts from the objects, does not read
    the tens of thousands of Event series a large cluster has)."""
    with transaction.atomic():  # one consistent snapshot
        rows, series = stored_rows(), (event_rows() if events else [])
    return [json.loads(r.document) for r in rows] + [json.loads(e.document) for e in series]


def export_text(fmt: str = "yaml") -> str:
    """The stored cluster as a ``v1 List``, ``yaml`` or ``json`` (deterministic)."""
    if fmt not in ("yaml", "json"):
        raise ValueError(f"unknown format {fmt!r}: use yaml or json")
    return dump(as_list(export_documents()), fmt)


def import_files(paths: Sequence[str], user=None, replace: bool = False) -> ImportResult:
    """:func:`import_texts` for files; an unreadable file is a problem like any other."""
    loaded = load_files(paths, console_profile())
    check_write(user, [*loaded.objects, *loaded.events])
    return ImportResult.of(write(loaded.objects, loaded.events, replace_all=replace),
                           loaded.objects, loaded.warnings)
