"""Semantic versions: parsed tolerantly, as the seeds' ``SemVersion`` type is, or strictly
(semver 2.0.0, as resource.k8s.io/v1 and Kubernetes' CEL ``semver()`` read them)."""

from __future__ import annotations

import re

import semver

__all__ = ["parse_version", "parse_strict_version"]

_UINT64_MAX = 2**64 - 1
_NUMBER = r"(?:0|[1-9][0-9]*)"
_PRERELEASE_PART = r"(?:[0-9]+|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_STRICT = re.compile(
    rf"(?P<major>{_NUMBER})\.(?P<minor>{_NUMBER})\.(?P<patch>{_NUMBER})"
    rf"(?:-(?P<prerelease>{_PRERELEASE_PART}(?:\.{_PRERELEASE_PART})*))?"
    r"(?:\+(?P<build>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
)


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


def parse_strict_version(text: str, normalize: bool = False) -> semver.Version:
    """Parse semver 2.0.0 exactly (ASCII, no spaces, numbers within uint64, no leading zeros
    in numeric identifiers), as Kubernetes' ``semver.Parse`` does; with ``normalize``, first
    drop a leading ``v`` and leading zeros and pad ``1``/``1.2`` (Kubernetes'
    ``semver(s, true)``, which unlike :func:`parse_version` trims no spaces). Raise ValueError
    when ``text`` is not a version."""
    if not isinstance(text, str):
        raise ValueError(f"a version must be a string, not {type(text).__name__}")
    candidate = _normalise(text, trim=False) if normalize else text
    match = _STRICT.fullmatch(candidate)
    if match is None:
        raise ValueError(f"{text!r} is not a valid semantic version")
    numbers = [match["major"], match["minor"], match["patch"]]
    numbers += [part for part in (match["prerelease"] or "").split(".") if part.isdigit()]
    if any(part[:1] == "0" and len(part) > 1 for part in numbers[3:]):
        raise ValueError(f"{text!r} is not a valid semantic version: a numeric pre-release "
                         "identifier has a leading zero")
    if any(int(part) > _UINT64_MAX for part in numbers):
        raise ValueError(f"{text!r} is not a valid semantic version: a number is out of range")
    return semver.Version(int(match["major"]), int(match["minor"]), int(match["patch"]),
                          match["prerelease"], match["build"])


def _normalise(text: str, trim: bool = True) -> str:
    if trim:
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
