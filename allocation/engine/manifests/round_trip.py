"""YAML for people: an object's manifest as a person edits it, and where a field path is.

The engine's writer (:mod:`allocation.engine.writer`) is deterministic, for machines: sorted
keys, multi-line CEL as one escaped string. An editor shows a manifest the way Kubernetes
users write it (``apiVersion``, ``kind``, ``metadata``, ``spec``, ``status`` first; multi-line
strings as ``|`` blocks) and keeps what the person wrote: ruamel.yaml's round-trip mode
preserves key order, comments and flow/block style of an edited text, so an edit that is
refused is shown again exactly as typed, and problems are placed at their line by following
the loader's field paths (``spec.selectors[0].cel.expression``) through the same text
(docs/console.md, "YAML views and the editor").
"""

from __future__ import annotations

import io
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import LiteralScalarString

from allocation.engine.manifests.flow_depth import cap_flow_depth
from allocation.engine.manifests.limits import MAX_NESTING_DEPTH

__all__ = ["editable_yaml", "line_of", "lines_of", "merge_document", "set_values"]

#: Keys written first, in this order, at the top and in ``metadata``: the order of
#: ``kubectl get -o yaml``; every other key follows in the document's own order.
_TOP_ORDER = ("apiVersion", "kind", "metadata", "spec")
_META_ORDER = ("name", "generateName", "namespace", "labels", "annotations")
_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
# ruamel.yaml composes a node per nesting level by recursion, and its scanner slows down
# with every open flow level (seconds at a thousand): a text nested deeper than the
# loader's bound is read only up to one level past it (``cap_flow_depth``: same lines), or
# not at all where it must be kept whole. A deep block nesting still recurses: caught.
_DEPTH_CUT = MAX_NESTING_DEPTH + 1


class _TooDeep(ValueError):
    """The text nests deeper than the loader's bound (``limits.MAX_NESTING_DEPTH``)."""


def _load_whole(text: str) -> Any:
    """The one document of ``text`` as a round-trip tree, kept whole (it is written back).

    Raises:
        _TooDeep: the text nests too deep to be read here.
        YAMLError: the text is not YAML.
    """
    if cap_flow_depth(text, _DEPTH_CUT) is not text:
        raise _TooDeep(f"nested more than {MAX_NESTING_DEPTH} levels deep")
    try:
        return _yaml().load(text)
    except RecursionError:
        raise _TooDeep(f"nested more than {MAX_NESTING_DEPTH} levels deep") from None


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=2, offset=0)
    yaml.width = 100
    yaml.preserve_quotes = True
    return yaml


def _ordered(value: dict, first: tuple[str, ...]) -> list[str]:
    return [k for k in first if k in value] + [k for k in value if k not in first]


def _node(value: Any, order: tuple[str, ...] = ()) -> Any:
    if isinstance(value, dict):
        out = CommentedMap()
        for key in _ordered(value, order):
            out[key] = _node(value[key], _META_ORDER if key == "metadata" and
                             order is _TOP_ORDER else ())
        return out
    if isinstance(value, list):
        return CommentedSeq(_node(v) for v in value)
    if isinstance(value, str) and "\n" in value.strip("\n") and _literal_safe(value):
        return LiteralScalarString(value)
    return value


def _literal_safe(text: str) -> bool:
    # A block scalar cannot hold trailing spaces on a line, tabs at a line's start or
    # characters YAML does not print; those stay quoted.
    return not text.startswith(" ") and all(ch == "\n" or ch.isprintable() for ch in text) \
        and not any(line != line.rstrip(" ") or line.startswith("\t")
                    for line in text.split("\n"))


def editable_yaml(document: dict) -> str:
    """``document`` as YAML for a person: Kubernetes' key order, ``|`` blocks for multi-line
    strings. Returns text that reads back as exactly ``document``."""
    stream = io.StringIO()
    _yaml().dump(_node(document, _TOP_ORDER), stream)
    return stream.getvalue()


def merge_document(text: str, document: dict) -> str:
    """``text`` (one YAML document, as a person wrote it) changed to read as ``document``:
    keys kept in their order with their comments and style, changed values replaced, new
    keys appended, removed keys dropped. Returns :func:`editable_yaml` when ``text`` is not
    one YAML mapping."""
    try:
        tree = _load_whole(text)
    except (YAMLError, _TooDeep):
        tree = None
    if not isinstance(tree, CommentedMap):
        return editable_yaml(document)
    _merge_map(tree, document)
    stream = io.StringIO()
    _yaml().dump(tree, stream)
    return stream.getvalue()


def _merge_map(tree: CommentedMap, wanted: dict) -> None:
    for key in [k for k in tree if k not in wanted]:
        del tree[key]
    for key, value in wanted.items():
        if key in tree:
            tree[key] = _merged(tree[key], value)
        else:
            tree[key] = _node(value)


def _merged(old: Any, new: Any) -> Any:
    if isinstance(old, CommentedMap) and isinstance(new, dict):
        _merge_map(old, new)
        return old
    if isinstance(old, CommentedSeq) and isinstance(new, list) and len(old) == len(new):
        for index, value in enumerate(new):
            old[index] = _merged(old[index], value)
        return old
    if old == new and (type(old) is type(new) or isinstance(old, str) and isinstance(new, str)):
        return old  # the same value: keep its quoting or block style
    return _node(new)


def set_values(text: str, values: dict[str, str]) -> str:
    """``text`` (one YAML mapping) with a string set at each field path of ``values``
    (``filters[0].named.selector``), everything else kept as written; a multi-line string
    becomes a ``|`` block.

    Raises:
        ValueError: ``text`` is not one YAML mapping (the message says why: not YAML, not
            a mapping, nested too deep).
        LookupError: (``KeyError``/``IndexError``) the text has no such field; ``args[0]``
            is the path.
    """
    try:
        tree = _load_whole(text)
    except YAMLError as exc:
        raise ValueError(f"it is not YAML: {exc}") from None
    if not isinstance(tree, CommentedMap):
        raise ValueError("it is not one object (a mapping)")
    for path, value in values.items():
        steps = [int(i) if i else k for k, i in _STEP.findall(path)]
        target = tree
        try:
            for step in steps[:-1]:
                target = target[step]
            if not isinstance(target, (CommentedMap, CommentedSeq)) or \
                    steps[-1] not in (target if isinstance(target, CommentedMap)
                                      else range(len(target))):
                raise KeyError(path)
        except (KeyError, IndexError, TypeError):
            raise KeyError(path) from None
        target[steps[-1]] = _node(value)
    stream = io.StringIO()
    _yaml().dump(tree, stream)
    return stream.getvalue()


def _tree(text: str, doc: int) -> Any:
    try:
        documents = list(_yaml().load_all(cap_flow_depth(text, _DEPTH_CUT)))
    except (YAMLError, RecursionError):
        return None
    return documents[doc - 1] if 0 < doc <= len(documents) else None


def line_of(text: str, path: str, doc: int = 1) -> int | None:
    """The line (from 1) of field ``path`` in document ``doc`` of ``text``.

    A path the text does not hold all the way (a missing required field) gives the line of
    its deepest part that exists; the document's first line for an empty path. Returns None
    when the text is not YAML the round-trip reader can read.
    """
    return lines_of(text, [path], doc)[0]


def lines_of(text: str, paths: list[str], doc: int = 1) -> list[int | None]:
    """:func:`line_of` for several paths, reading ``text`` once."""
    tree = _tree(text, doc)
    if tree is None:
        return [None] * len(paths)
    return [_walk(tree, path) for path in paths]


def _walk(node: Any, path: str) -> int | None:
    line = _start(node)
    rest = path
    while rest:
        if isinstance(node, CommentedSeq) and rest.startswith("["):
            end = rest.find("]")
            index = rest[1:end]
            if end < 0 or not index.isdigit() or int(index) >= len(node):
                break
            line = node.lc.item(int(index))[0] + 1
            node, rest = node[int(index)], rest[end + 1:]
        elif isinstance(node, CommentedMap):
            key = _key_at(node, rest.removeprefix("."))
            if key is None or key not in node.lc.data:
                break  # none, or merged in by ``<<`` (no line of its own here)
            line = node.lc.key(key)[0] + 1
            node, rest = node[key], rest.removeprefix(".")[len(key):]
        else:
            break
    return line


def _start(node: Any) -> int | None:
    lc = getattr(node, "lc", None)
    return lc.line + 1 if lc is not None and lc.line is not None else 1


def _key_at(node: CommentedMap, rest: str) -> str | None:
    """The longest key of ``node`` that ``rest`` starts with as a whole step (keys such as
    ``draplanner.io/explain`` hold dots)."""
    found = None
    for key in node:
        if isinstance(key, str) and rest.startswith(key) and \
                rest[len(key):len(key) + 1] in ("", ".", "[") and \
                (found is None or len(key) > len(found)):
            found = key
    return found
