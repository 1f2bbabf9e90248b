"""A ``numericParameters`` class's ``celTemplate``: expansion and the counter Parameters type.

``celTemplate`` is YAML in which each ``{{ expression }}`` is CEL with ``object`` bound to the
claim's vendor parameters object (KEP-4381 numeric parameters, seed 000, ``docs/models.md``).
The expansion decodes into the counter Parameters type ``{required, selector}``
(``Required``/``Selector`` too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from allocation.engine.cel import CelCompileError, CelEvaluationError, compile_expression
from allocation.engine.constants import COUNTER_API_VERSIONS
from allocation.engine.manifests.common import label_selector
from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.reader import read_text
from allocation.engine.manifests.schema import Int, MapOf, Obj, Str
from allocation.engine.templates import OBJECT_VARIABLES, PLACEHOLDER, json_text

__all__ = ["Demand", "TemplateError", "expand_template", "decode_parameters"]

_WHOLE_VALUE = re.compile(r"^\s*(?:-\s+)*(?:[^:\s][^:]*:\s+)?(?:-\s+)*$")

_parameters = Obj({
    "apiVersion": Str(enum=COUNTER_API_VERSIONS), "kind": Str(enum=("Parameters",)),
    "metadata": Obj({"name": Str(), "labels": MapOf(Str()), "annotations": MapOf(Str())}),
    "required": Int(minimum=1), "Required": Int(minimum=1),
    "selector": label_selector, "Selector": label_selector,
}, one_of=(("required", "Required"),), at_most_one=(("selector", "Selector"),))


class TemplateError(ValueError):
    """A ``celTemplate`` that does not expand or decode; the message says why."""


@dataclass(frozen=True, slots=True)
class Demand:
    """What one counter claim asks for: units and a label selector over instance labels."""

    required: int
    selector: Any = None


@lru_cache(maxsize=256)
def _compiled(source: str):
    return compile_expression(source, OBJECT_VARIABLES)


def _render(value: Any, whole: bool) -> str:
    if isinstance(value, str) and not whole:
        return value
    return json_text(value)


def expand_template(template: str, obj: Any) -> str:
    """``template`` with every ``{{ expression }}`` replaced by its CEL value over ``obj``.

    A placeholder that is a whole YAML value is replaced by the value's JSON text (so numbers
    stay numbers and strings are quoted); inside other text it is replaced by plain text.
    """
    out: list[str] = []
    last = 0
    for match in PLACEHOLDER.finditer(template):
        source = match.group(1).strip()
        try:
            value = _compiled(source).evaluate(object=obj)
        except CelCompileError as exc:
            raise TemplateError(f"placeholder {{{{{source}}}}} is not valid CEL: {exc}") from None
        except CelEvaluationError as exc:
            raise TemplateError(f"placeholder {{{{{source}}}}} failed: {exc}") from None
        try:
            rendered = _render(value, _whole_value(template, match))
        except ValueError as exc:
            raise TemplateError(f"placeholder {{{{{source}}}}} gave no JSON value: {exc}") \
                from None
        out.append(template[last:match.start()])
        out.append(rendered)
        last = match.end()
    out.append(template[last:])
    return "".join(out)


def _whole_value(template: str, match: re.Match) -> bool:
    """Whether the placeholder ``match`` is a whole YAML value of ``template``'s line."""
    line_start = template.rfind("\n", 0, match.start()) + 1
    line_end = template.find("\n", match.end())
    before = template[line_start:match.start()]
    after = template[match.end():len(template) if line_end < 0 else line_end]
    return _WHOLE_VALUE.match(before) is not None and after.strip() == ""


def decode_parameters(text: str) -> Demand:
    """The counter Parameters an expanded template describes; TemplateError if invalid.

    The text is read as a manifest file is (``reader.read_text``): within the same bounds
    (an alias bomb expanding to millions of values is refused at once, not checked value
    by value for every pod) and to the same values (no lone surrogate, which no output can
    hold)."""
    documents = read_text(text)
    data = documents[0].data if documents else None
    if len(documents) > 1:
        raise TemplateError("expands to more than one YAML document")
    if documents and documents[0].error is not None:
        raise TemplateError(f"expands to invalid YAML: {documents[0].error}")
    if documents and documents[0].problems:
        raise TemplateError("expands to invalid YAML: " + "; ".join(
            f"{path or '<document>'}: {message}" for path, message in documents[0].problems))
    if not isinstance(data, dict):
        raise TemplateError("must expand to a mapping with required (and optional selector), "
                            f"got {type(data).__name__}: {text.strip()!r}")
    problems = ProblemList()
    _parameters.check(data, "", problems)
    if problems:
        raise TemplateError("expands to invalid counter Parameters: " + "; ".join(
            f"{path or '<document>'}: {message}" for path, message in problems.items))
    required = data.get("required", data.get("Required"))
    selector = data.get("selector", data.get("Selector"))
    return Demand(int(required), selector or None)
