"""Semantic versions parsed tolerantly, as the seeds' ``SemVersion`` type is."""

from __future__ import annotations

import semver

__all__ = ["parse_version"]


def parse_version(text: str) -> semver.Version:
    """Parse ``text`` after trimming spaces, a leading ``v`` and leading zeros, and padding
    ``1`` or ``1.2`` to three components; raise ValueError when it is still not semver."""
    if not isinstance(text, str):
        raise ValueError(f"a version must be a string, not {type(text).__name__}")
    normalised = _normalise(text)
    try:
        return semver.Version.parse(normalised)
    except ValueError:
        raise ValueError(f"{text!r} is not a valid semantic version") from None


def _normalise(text: str) -> str:
    text = text.strip()
    if text.startswith("v"):
        text = text[1:]
    parts = text.split(".", 2)
    for index, part in enumerate(parts):
        if len(part) > 1:
            trimmed = part.lstrip("0")
            if not trimmed or not trimmed[0].isdigit():
                trimmed = "0" + trimmed
            parts[index] = trimmed
    if len(parts) < 3:
        if any(sign in parts[-1] for sign in "+-"):
            raise ValueError(f"{text!r} is not a valid semantic version: a short version "
                             "cannot carry pre-release or build metadata")
        parts.extend(["0"] * (3 - len(parts)))
    return ".".join(parts)
