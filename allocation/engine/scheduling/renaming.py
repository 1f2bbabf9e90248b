"""A pending pod's ``draplanner.io/explain`` text, rendered once and renamed for its twins.

Pods made from one template differ only in the names of their claims, so the scheduler
(either dialect) remembers one pod's failure and gives each identical pod the same answer.
The annotation names the pod's own unallocated claims in its request entries' ``claim``
fields; reusing the first pod's text as it is would name that pod's claims in every other
pod's annotation. :func:`render` notes where the names stand, once per failure, and
:func:`renamed` puts an identical pod's names in their places, byte-identical to rendering
its own body (encoding each annotation again was most of the time of a pass with many
pending pods, docs/v1.md "Speed").
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from allocation.engine.scheduling import binding

__all__ = ["Rendered", "render", "renamed", "substitute"]


class Rendered(NamedTuple):
    """A pending pod's annotation text, and what :func:`renamed` needs to give it to an
    identical pod: the pod's unallocated claims (``refs``) and how many request entries
    name each."""

    text: str
    refs: tuple[str, ...]
    counts: Counter[str]
    # ``refs`` JSON-quoted when each occurs in ``text`` only as a ``claim`` field (so a
    # substitution changes those fields alone), else None: checked once per text
    quoted: tuple[str, ...] | None = None
    # one claim's ``quoted`` name substitutable: ``text`` split at it, once per text (the
    # pods renamed join the parts: ``str.replace`` searched the whole text per pod)
    parts: tuple[str, ...] | None = None


def render(message: str, body: dict, refs: Sequence[str]) -> Rendered:
    """The annotation text of ``message`` and ``body`` (``binding.explain_text``), for a
    pod whose unallocated claims are ``refs`` (``namespace/name``).

    Returns:
        The text, with the claims it names in request entries.
    """
    counts: Counter[str] = Counter(
        request["claim"] for node in body.get("nodes") or () for request in
        node.get("requests") or ())
    text = binding.explain_text(message, body)
    refs = tuple(refs)
    quoted = tuple(_quoted(ref) for ref in refs)
    # A quoted name matches whole JSON strings only; every one must be a ``claim`` field.
    substitutable = all(text.count(q) == counts[ref] for ref, q in zip(refs, quoted,
                                                                        strict=True))
    if not substitutable:
        return Rendered(text, refs, counts)
    parts = tuple(text.split(quoted[0])) if len(quoted) == 1 else None
    return Rendered(text, refs, counts, quoted, parts)


def renamed(rendered: Rendered, refs: Sequence[str]) -> str | None:
    """``rendered``'s text for an identical pod, whose unallocated claims ``refs`` take the
    places of the rendered pod's.

    Returns:
        The text, byte-identical to rendering the pod's own body, or None when a claim
        name appears elsewhere than in the request entries' ``claim`` fields (a CEL error
        may quote it), where a substitution could change more than those fields.
    """
    if len(refs) != len(rendered.refs) or len(set(rendered.refs)) != len(refs):
        return None
    if rendered.quoted is None:  # a name occurs elsewhere than in a ``claim`` field
        return None
    if rendered.parts is not None:  # one claim (the usual pod): its one name, no mapping
        new = _quoted(refs[0])
        return rendered.text if new == rendered.quoted[0] else new.join(rendered.parts)
    quoted = {old: _quoted(new) for old, new in zip(rendered.quoted, refs, strict=True)}
    if all(old == new for old, new in quoted.items()):
        return rendered.text
    return substitute(rendered.text, quoted)


def _quoted(ref: str) -> str:
    """``json.dumps(ref)``: a claim's ``namespace/name`` as the annotation's JSON writes it.
    Such a name is printable ASCII without ``"`` or ``\\`` (the API's names), which JSON
    writes between quotes as it is; anything else goes through ``json.dumps`` (asked per
    pending pod, where ``json.dumps`` was a fifth of renaming its annotation)."""
    if ref.isascii() and ref.isprintable() and '"' not in ref and "\\" not in ref:
        return f'"{ref}"'
    return json.dumps(ref)


def substitute(text: str, quoted: dict[str, str]) -> str:
    """``text`` with every occurrence of a key of ``quoted`` replaced by its value, all at
    once, left to right (no replacement is searched again). One key (a pod with one claim,
    the usual case): ``str.replace``, which does exactly that for one literal."""
    if len(quoted) == 1:
        [(old, new)] = quoted.items()
        return text.replace(old, new)
    pattern = re.compile("|".join(re.escape(old) for old in quoted))
    return pattern.sub(lambda match: quoted[match.group(0)], text)
