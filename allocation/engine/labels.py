"""Label selectors and node selectors, evaluated as Kubernetes does."""

from __future__ import annotations

from typing import Any

__all__ = ["label_selector_matches", "node_selector_matches", "named_nodes",
           "unmet_requirement"]


def _requirement(op: str, value: str | None, values: list[str]) -> bool:
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt"):
        try:
            left, right = int(value or ""), int(values[0])
        except (ValueError, IndexError):
            return False
        return left > right if op == "Gt" else left < right
    return False


def label_selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """A metav1.LabelSelector; an empty or missing selector matches everything."""
    if not selector:
        return True
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or ():
        if not _requirement(expr["operator"], labels.get(expr["key"]),
                            list(expr.get("values") or ())):
            return False
    return True


def node_selector_matches(selector: dict[str, Any], node) -> bool:
    """A core NodeSelector: any term matches when all its requirements do."""
    fields = {"metadata.name": node.name}
    for term in selector.get("nodeSelectorTerms") or ():
        ok = all(_requirement(e["operator"], node.meta.labels.get(e["key"]),
                              list(e.get("values") or ())) for e in term.get(
            "matchExpressions") or ())
        ok = ok and all(_requirement(e["operator"], fields.get(e["key"]),
                                     list(e.get("values") or ())) for e in term.get(
            "matchFields") or ())
        if ok and (term.get("matchExpressions") or term.get("matchFields")):
            return True
    return False


def named_nodes(selector: dict[str, Any]) -> frozenset[str] | None:
    """The node names ``selector`` (a core NodeSelector) can match at most, when every term
    names them (``matchFields`` ``metadata.name`` ``In``: how a pin or a DaemonSet pod
    names its node), or None when a term may match a node of any name.

    :func:`node_selector_matches` holds for no node outside the set (a term matches when
    all its requirements do), so a scan for a node that takes the pod need look only at
    these (docs/scenarios.md, "Evaluation, diff and undo": a pinned pod is not filtered
    against every node of a large cluster).
    """
    names: set[str] = set()
    for term in selector.get("nodeSelectorTerms") or ():
        if not (term.get("matchExpressions") or term.get("matchFields")):
            continue  # an empty term matches no node
        named = [e.get("values") or () for e in term.get("matchFields") or ()
                 if e.get("key") == "metadata.name" and e.get("operator") == "In"]
        if not named:
            return None
        names.update(named[0])  # a node of the term is named in each; the first will do
    return frozenset(names)


def unmet_requirement(term: dict[str, Any], node) -> tuple[dict, str | None] | None:
    """The first requirement of one NodeSelectorTerm that ``node`` does not meet, with the
    node's value of its key (a label, or ``metadata.name`` for ``matchFields``), as
    :func:`node_selector_matches` judges it; an empty term (which matches no node) gives
    ``({}, None)``.

    Returns:
        ``(requirement, the node's value or None)``, or None when the term matches.
    """
    expressions = term.get("matchExpressions") or ()
    fields = term.get("matchFields") or ()
    if not expressions and not fields:
        return {}, None
    for requirement in expressions:
        value = node.meta.labels.get(requirement["key"])
        if not _requirement(requirement["operator"], value,
                            list(requirement.get("values") or ())):
            return requirement, value
    for requirement in fields:
        value = node.name if requirement["key"] == "metadata.name" else None
        if not _requirement(requirement["operator"], value,
                            list(requirement.get("values") or ())):
            return requirement, value
    return None
