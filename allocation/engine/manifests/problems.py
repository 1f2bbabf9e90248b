"""Validation problems: what is wrong, where, in which object."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Problem", "ProblemList", "InvalidManifests"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with one field of one document.

    Rendered as ``FILE:DOC (Kind namespace/name): field.path: message``; ``DOC`` counts the
    documents of a file from 1.
    """

    file: str
    doc: int
    kind: str
    namespace: str | None
    name: str | None
    path: str
    message: str

    @property
    def object_ref(self) -> str:
        name = self.name or "<unnamed>"
        ident = f"{self.namespace}/{name}" if self.namespace else name
        return f"{self.kind or '<no kind>'} {ident}"

    @property
    def in_object(self) -> str:
        """``(Kind namespace/name): field.path: message``, without the file and document
        number: for documents a person did not number (a scenario's added objects)."""
        return _one_line(f"({self.object_ref}): {self.path or '<document>'}: {self.message}")

    def __str__(self) -> str:
        return f"{_one_line(f'{self.file}:{self.doc}')} {self.in_object}"


_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _one_line(text: str) -> str:
    """``text`` with control characters, line breaks and lone surrogates escaped: a key
    such as ``"a\\nb"`` must not split a problem over two lines."""
    return _BREAKS.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace")
                       .decode("ascii"), text)


class ProblemList:
    """Collects problems for one document; field paths are relative to the document."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, path: str, message: str) -> None:
        self.items.append((path, message))

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)


class InvalidManifests(Exception):
    """Raised when any document is invalid; carries every problem found, in input order."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__(f"{len(problems)} problem(s) in the input")

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)
