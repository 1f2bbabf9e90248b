"""The words of a diagnosis (``diagnosis.py``): one sentence per diff item and per
suggestion, shared by the console's pod page and the what-if scenarios' refusals.

Diff items and suggestions come from annotations a person may have written, so every
function here takes any dict and never raises: what it cannot word it shows as JSON.
"""

from __future__ import annotations

import json

__all__ = ["diff_text", "diff_texts", "diff_sentence", "suggestion_text", "requirement_text",
           "affinity_terms"]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _pair(key: object, value: object) -> str:
    return f"{key}={value}"


def _devices(item: dict, named: bool = True) -> str:
    wants, free, klass = item.get("wants"), item.get("free", 0), item.get("class") or "?"
    request = f" (request {item['request']})" if named and item.get("request") else ""
    matched = ("no free device matches" if not free else
               f"{free} free one matches" if free == 1 else f"{free} free ones match")
    if wants == "all":
        return f"needs every device of class {klass}{request}; {matched}"
    where = " on one node" if isinstance(wants, int) and wants > 1 else ""
    count = _plural(wants, "device") if isinstance(wants, int) else f"{wants} devices"
    return f"needs {count} of class {klass}{where}{request}; {matched}"


def requirement_text(requirement: dict) -> str:
    """One node selector requirement: ``gpu In (a100, h100)``, ``zone Exists``."""
    values = requirement.get("values") or []
    return (f"{requirement.get('key')} {requirement.get('operator', '')}"
            + (f" ({', '.join(map(str, values))})" if values else ""))


def affinity_terms(affinity: object) -> list[str]:
    """A required node affinity's terms in words, one per term (any may match): its
    requirements joined by ``and``; an empty term says that it matches no node."""
    terms = affinity.get("nodeSelectorTerms") if isinstance(affinity, dict) else None
    out = []
    for term in terms or ():
        requirements = [*(term.get("matchExpressions") or ()), *(term.get("matchFields") or ())]
        out.append(" and ".join(requirement_text(r) for r in requirements)
                   or "(an empty term: it matches no node)")
    return out


def _affinity(item: dict) -> str:
    term = f"node affinity term {int(item.get('term', 0)) + 1}"
    if "key" not in item:
        return f"{term} is empty, so it matches no node"
    key = item["key"]
    has = (f"the node has {_pair(key, item['has'])}" if "has" in item
           else f"the node has no {key}")
    return f"{term} wants {requirement_text(item)}; {has}"


def _selector(item: dict) -> str:
    has = (f"the node has {_pair(item.get('key'), item['has'])}" if "has" in item
           else f"the node has no {item.get('key')} label")
    return f"nodeSelector wants {_pair(item.get('key'), item.get('wants'))}; {has}"


_DIFF = {
    "cordoned": lambda i: "the node is cordoned (spec.unschedulable)",
    "taint": lambda i: (f"the node has the taint {i['taint']}, which no toleration of "
                        "the pod tolerates"),
    "nodeSelector": _selector,
    "nodeAffinity": _affinity,
    "cpu": lambda i: f"asks for {i.get('wants')} cpu; the node has {i.get('free')} free",
    "memory": lambda i: (f"asks for {i.get('wants')} of memory; the node has "
                         f"{i.get('free')} free"),
    "resource": lambda i: (f"asks for {i.get('wants')} {i.get('resource')}; the node has "
                           f"{i.get('free')} free"),
    "pods": lambda i: f"the node already runs as many pods as it allows ({i.get('max')})",
    "claimElsewhere": lambda i: "a claim of the pod is allocated where this node cannot use it",
    "claimUnready": lambda i: (f"the device of claim {', '.join(i.get('claims') or ())} failed "
                               "to get ready for binding (a failure condition, or the binding "
                               "timeout); it is freed once no other pod holds the claim"),
    "suitableNodes": lambda i: "the claim's resource class does not allow this node "
                               "(suitableNodes)",
    "together": lambda i: "each request has enough free devices, but not all of them together",
    "budget": lambda i: "the allocation search gave up before trying every combination",
    "other": lambda i: str(i["reason"]),
}


def diff_text(item: object, named: bool = True) -> str:
    """One diff item in words: ``nodeSelector wants gpu=h100; the node has gpu=a100``;
    ``named`` False leaves a ``devices`` item's request out (the node's only one).

    Returns:
        The sentence (without a final stop), or the item as JSON when it is not one the
        planner writes.
    """
    try:
        if item["check"] == "devices":
            return _devices(item, named)
        return _DIFF[item["check"]](item)
    except (KeyError, TypeError, ValueError, AttributeError):
        return json.dumps(item, sort_keys=True)


def diff_texts(diff: object) -> list[str]:
    """A node's diff in words, item by item; a ``devices`` item names its request only
    when the node has several."""
    items = diff if isinstance(diff, list) else [diff]
    named = sum(1 for i in items if isinstance(i, dict) and i.get("check") == "devices") > 1
    return [diff_text(item, named) for item in items]


def diff_sentence(diff: object) -> str:
    """A node's whole diff in one line: its items' words joined by ``; ``."""
    return "; ".join(diff_texts(diff))


def _label(item: dict) -> str:
    key, wants = item["key"], item["wants"]
    values = item.get("values") or []
    seen = (f"nodes have {', '.join(_pair(key, v) for v in values)}" if values
            else f"no node has a {key} label")
    return (f"No node has label {_pair(key, wants)} ({seen}): change the pod's "
            f"nodeSelector, or label a node {_pair(key, wants)}.")


def _group(item: dict) -> str:
    text = f"A new node of node group {item['group']} would fit the pod"
    if item.get("atMaxSize"):
        return text + (f", but the group is at its maxSize {item.get('maxSize')}: raise "
                       "spec.maxSize to let the autoscaler add it.")
    return text + "."


def _free(item: dict) -> str:
    pods = item.get("pods") or []
    users = f" (reserved for {', '.join(map(str, pods))})" if pods else ""
    return (f"Deallocating claim {item['claim']}{users} would let the pod fit on node "
            f"{item['node']}.")


_SUGGESTIONS = {
    "label": _label,
    "nodeAffinity": lambda i: ("No node satisfies the pod's required node affinity: change "
                               "it, or label a node to match."),
    "selector": lambda i: (f"No free device on the {_plural(int(i['nodes']), 'node')} "
                           f"diagnosed satisfies `{i['selector']}` (class {i.get('class')}, "
                           f"request {i.get('request')}): change the selector, or add "
                           "devices that satisfy it."),
    "toleration": lambda i: (f"Every free device of request {i.get('request')} (class "
                             f"{i.get('class')}) on the {_plural(int(i['nodes']), 'node')} "
                             f"diagnosed has the taint {i['taint']}, which the request does "
                             "not tolerate: add a toleration to the request, or take the "
                             "taint off the devices."),
    "nodeTaint": lambda i: (f"{_plural(int(i['nodes']), 'node')} diagnosed "
                            f"{'has' if int(i['nodes']) == 1 else 'have'} the taint "
                            f"{i['taint']}, which the pod does not tolerate: add a toleration "
                            "to the pod (spec.tolerations) if it may run there."),
    "nodeGroup": _group,
    "freeClaim": _free,
}


def suggestion_text(item: object) -> str:
    """One suggestion in words: what to change, and why it would help.

    Returns:
        The sentence, or the item as JSON when it is not one the planner writes.
    """
    try:
        return _SUGGESTIONS[item["kind"]](item)
    except (KeyError, TypeError, ValueError, AttributeError):
        return json.dumps(item, sort_keys=True)
