"""The scheduler's ``draplanner.io/explain`` annotation, rendered for a person.

The annotation is JSON: ``{"summary", "nodes": [{"node", "reason", "requests": [...]}],
"omittedNodes"}`` where each request entry has ``claim``, ``request``, ``driver``,
``selectors`` and either ``problem`` or ``matching`` plus ``refused`` (``[{reason,
candidates}]``). Pods with resource.k8s.io/v1 claims (``scheduling/v1_explain.py``) write
the same shape with ``class`` instead of ``driver``, a ``code`` and a ``more`` count per
refusal group, ``matchingMore`` / ``refusedMore`` per request, ``omittedRequests`` per node
and, for a failed attempt (SchedulerError), an ``error`` naming the claim, request, device,
selector, expression and CEL error. The diagnosis (``scheduling/diagnosis.py``) adds a
``diff`` per node (what the node lacks), ``nearest`` (the nodes that fail by the least) and
``suggestions``, worded by ``scheduling/diagnosis_text.py``: a node is said once, by its
diff, and alike request entries of one node (a claim asking for three alike devices) are
one entry with their request names. This module turns it into sentences; it never fails on
odd input (a hand-written annotation, an older format): what it cannot read it shows as it
is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from allocation.engine.constants import EXPLAIN_ANNOTATION
from allocation.engine.scheduling import reasons
from allocation.engine.scheduling.diagnosis_text import diff_texts, suggestion_text
from allocation.engine.v1 import INVALID_POOLS, NOT_AVAILABLE, TIMED_OUT
from allocation.presenters.common import object_url

__all__ = ["AttemptError", "Explanation", "NodeExplanation", "Nearest", "RequestExplanation",
           "Refused", "explain_pod", "node_reason_text"]

# kube-scheduler's terse reasons (as the engine writes them) in plain words.
_NODE_REASONS = {
    reasons.R_UNSCHEDULABLE: "the node is cordoned (spec.unschedulable)",
    reasons.R_SELECTOR: "the node does not match the pod's nodeSelector or node affinity",
    reasons.R_CPU: "not enough CPU is left on the node",
    reasons.R_MEMORY: "not enough memory is left on the node",
    reasons.R_PODS: "the node already runs as many pods as it allows",
    reasons.R_CLAIMS: "the pod's claims cannot all be allocated on this node",
    reasons.R_ELSEWHERE: "a claim of the pod is already allocated on another node",
    reasons.R_CLASS: "the resource class does not allow this node (suitableNodes)",
    reasons.R_BUDGET: "the allocation search gave up before trying every combination",
    reasons.FITS_NOW: "the pod fits here now (the cluster changed since it was last tried)",
    INVALID_POOLS: "the pod's claims cannot be allocated here, and a resource pool of the "
                   "node is invalid",
    NOT_AVAILABLE: "an allocated claim of the pod is not available on this node",
    TIMED_OUT: "the allocation search reached kube-scheduler's Filter timeout before trying "
               "every combination",
}


def node_reason_text(reason: str | None) -> str:
    if not reason:
        return "no reason recorded"
    if reasons.REASON_SEPARATOR in reason:  # NodeResourcesFit: every resource short
        return "; ".join(node_reason_text(part)
                         for part in reason.split(reasons.REASON_SEPARATOR))
    if reason.startswith(reasons.R_TAINT):  # "... taint {key: value}": the taint's own words
        return ("the node has a taint the pod does not tolerate "
                f"({reason.removeprefix(reasons.R_TAINT).strip()})")
    if reason.startswith(reasons.R_INSUFFICIENT) and reason not in _NODE_REASONS:
        return f"not enough {reason.removeprefix(reasons.R_INSUFFICIENT)} is left on the node"
    return _NODE_REASONS.get(reason, reason)


@dataclass(frozen=True, slots=True)
class Refused:
    """Candidates refused for one request for the same reason."""

    reason: str
    candidates: list[str]
    code: str = ""  # v1: the verdict's reason code (``allocation.engine.v1.explain.REASONS``)
    more: int = 0  # v1: refused for this reason but not listed

    @property
    def count(self) -> int:
        return len(self.candidates) + self.more


@dataclass(slots=True)
class RequestExplanation:
    claim: str
    claim_url: str | None
    request: str
    driver: str
    selectors: list[str]
    matching: list[str] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    problem: str | None = None
    device_class: str = ""  # v1 requests name a DeviceClass, not a driver
    more_matching: int = 0
    more_refused: int = 0  # v1: devices of refusal groups not listed
    alike: list[str] = field(default_factory=list)  # the other requests with this entry

    @property
    def source(self) -> str:
        """What the request asks of: its driver (seed) or its device class (v1)."""
        return self.driver or (f"class {self.device_class}" if self.device_class else "")

    @property
    def requests(self) -> list[str]:
        """This entry's request and the alike ones said with it."""
        return [self.request, *self.alike]

    @property
    def sentence(self) -> str:
        if self.problem:
            return f"Nothing to choose from: {self.problem}."
        if not self.matching:
            count = sum(r.count for r in self.refused) + self.more_refused
            return (f"None of the node's {count} candidate(s) is free and matches."
                    if count else "The node offers no candidates for this request.")
        listed = ", ".join(self.matching)
        if self.more_matching:
            listed += f" and {self.more_matching} more"
        found = len(self.matching) + self.more_matching
        but = (f"not enough for all {len(self.requests)} alike requests"
               if found < len(self.requests) else "not together with the pod's other requests")
        return f"{found} free candidate(s) match ({listed}), but {but}."


@dataclass(slots=True)
class NodeExplanation:
    node: str
    node_url: str | None
    reason: str | None
    requests: list[RequestExplanation] = field(default_factory=list)
    omitted_requests: int = 0
    diff: list[str] = field(default_factory=list)  # what the node lacks, item by item

    @property
    def sentence(self) -> str:
        """The node said once: what it lacks, else the scheduler's reason in words."""
        return "; ".join(self.diff) if self.diff else node_reason_text(self.reason)


@dataclass(frozen=True, slots=True)
class Nearest:
    """A node among those that fail by the least, and what it lacks."""

    node: str
    node_url: str | None
    diff: list[str]


@dataclass(slots=True)
class Explanation:
    """Why a pod is not scheduled: the summary line, the nearest nodes, suggestions and
    the per-node detail."""

    summary: str
    nodes: list[NodeExplanation] = field(default_factory=list)
    omitted_nodes: int = 0
    raw: str = ""
    readable: bool = True
    error: AttemptError | None = None
    nearest: list[Nearest] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)

    @property
    def focus(self) -> str | None:
        """The detailed node shown open: the nearest one detailed, else the first."""
        detailed = [node.node for node in self.nodes]
        return next((n.node for n in self.nearest if n.node in detailed),
                    detailed[0] if detailed else None)


@dataclass(frozen=True, slots=True)
class AttemptError:
    """Why the scheduling attempt itself failed (v1, ``SchedulerError``): for a CEL runtime
    error, the claim, request, device, selector and expression; else only ``error``."""

    error: str
    claim: str = ""
    claim_url: str | None = None
    request: str = ""
    device: str = ""
    selector: str = ""
    expression: str = ""


def _attempt_error(entry: object) -> AttemptError | None:
    if not isinstance(entry, dict):
        return None
    claim = str(entry.get("claim") or "")
    namespace, _, name = claim.rpartition("/")
    return AttemptError(
        error=str(entry.get("error") or ""), claim=claim,
        claim_url=object_url("ResourceClaim", namespace or "default", name) if name else None,
        **{k: str(entry.get(k) or "") for k in ("request", "device", "selector",
                                                 "expression")})


def _count(value: object) -> int:
    try:
        return max(int(value or 0), 0)
    except (TypeError, ValueError):
        return 0


def _request(entry: dict) -> RequestExplanation:
    claim = str(entry.get("claim", ""))
    namespace, _, name = claim.rpartition("/")
    return RequestExplanation(
        claim=claim, claim_url=object_url("ResourceClaim", namespace or "default", name)
        if name else None,
        request=str(entry.get("request", "")), driver=str(entry.get("driver", "")),
        selectors=[str(s) for s in entry.get("selectors") or ()],
        matching=[str(m) for m in entry.get("matching") or ()],
        refused=[Refused(str(r.get("reason", "")), [str(c) for c in r.get("candidates") or ()],
                         str(r.get("code") or ""), _count(r.get("more")))
                 for r in entry.get("refused") or () if isinstance(r, dict)],
        problem=entry.get("problem"), device_class=str(entry.get("class") or ""),
        more_matching=_count(entry.get("matchingMore")),
        more_refused=_count(entry.get("refusedMore")))


def _alike(entries: list[RequestExplanation]) -> list[RequestExplanation]:
    """One entry per set of alike requests (same claim, source, selectors and devices):
    the first, naming the others in ``alike``."""
    out: dict[tuple, RequestExplanation] = {}
    for entry in entries:
        key = (entry.claim, entry.source, tuple(entry.selectors), tuple(entry.matching),
               entry.more_matching, entry.problem,
               tuple((r.reason, tuple(r.candidates), r.more) for r in entry.refused))
        first = out.get(key)
        if first is None:
            out[key] = entry
        else:
            first.alike.append(entry.request)
    return list(out.values())


def _diff(value: object) -> list[str]:
    return diff_texts(value) if isinstance(value, list) and value else []


def explain_pod(annotations: dict[str, str], fallback: str = "") -> Explanation | None:
    """The explanation in a pod's annotations; None when there is none."""
    raw = annotations.get(EXPLAIN_ANNOTATION)
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return Explanation(summary=fallback or "The explanation could not be read.", raw=raw,
                           readable=False)
    nodes = []
    for entry in data.get("nodes") or ():
        if not isinstance(entry, dict):
            continue
        name = str(entry.get("node", ""))
        nodes.append(NodeExplanation(
            node=name, node_url=object_url("Node", None, name), reason=entry.get("reason"),
            requests=_alike([_request(r) for r in entry.get("requests") or ()
                             if isinstance(r, dict)]),
            omitted_requests=_count(entry.get("omittedRequests")),
            diff=_diff(entry.get("diff"))))
    said = {node.node: node.diff for node in nodes}
    nearest = []
    for entry in data.get("nearest") or ():
        if isinstance(entry, dict) and entry.get("node"):
            name = str(entry["node"])
            nearest.append(Nearest(name, object_url("Node", None, name),
                                   _diff(entry.get("diff")) or said.get(name) or []))
    return Explanation(summary=str(data.get("summary") or fallback), nodes=nodes,
                       omitted_nodes=_count(data.get("omittedNodes")), raw=raw,
                       error=_attempt_error(data.get("error")), nearest=nearest,
                       suggestions=[suggestion_text(s) for s in data.get("suggestions") or ()])
