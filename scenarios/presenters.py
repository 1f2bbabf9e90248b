"""The scenario page's view data, built from an evaluated scenario (engine state + diff)."""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from allocation.engine.autoscaler.nodegroups import group_nodes
from allocation.engine.constants import NODE_GROUP_LABEL
from allocation.engine.objects.provisioning import CLASS_NAMES
from allocation.engine.scenarios import ChangeError, Evaluation, pinned_node, read
from allocation.engine.state import ClusterState
from allocation.presenters.nodes import NodeDevices, node_devices
from allocation.presenters.status import pod_state
from allocation.services.read_model import pending_reason

__all__ = ["PodChip", "NodeCard", "GroupChip", "SelectorField", "QueueGroup", "QUEUE_CHIPS",
           "queue_groups", "ScenarioPage", "page", "describe_change"]

PR_CLASSES = CLASS_NAMES
"""The "Try a ProvisioningRequest" choices: the provisioningClassName values the cluster
autoscaler (and so the engine) acts on, never the seeds' aliases."""


@dataclass
class PodChip:
    ref: str
    node: str | None
    pinned: bool
    reason: str = ""
    new: bool = False  # newly scheduled or newly pending against the baseline
    state: str = "pending"  # in the status vocabulary (allocation/presenters/status.py)


@dataclass
class NodeCard:
    name: str
    group: str | None
    added: bool
    pods: list[PodChip]
    view: NodeDevices | None


@dataclass
class GroupChip:
    name: str
    size: int
    max_size: int


@dataclass
class SelectorField:
    kind: str
    object: str
    path: str
    expression: str


@dataclass
class QueueGroup:
    """Pending pods that wait for one reason: a count, the first few chips, how many more."""

    reason: str
    count: int
    pods: list[PodChip]
    more: int = 0
    open: bool = True


QUEUE_CHIPS = 25
"""Chips drawn per reason in the queue: a large cluster's thousand pending pods would push
the bin out of reach (the others stay reachable through the Move form)."""


def queue_groups(queue: list[PodChip], chips: int = QUEUE_CHIPS) -> list[QueueGroup]:
    """The queue grouped by pending reason, largest group first; a group is open when it is
    short or alone."""
    by_reason: dict[str, list[PodChip]] = {}
    for chip in queue:
        by_reason.setdefault(chip.reason, []).append(chip)
    ordered = sorted(by_reason.items(), key=lambda item: (-len(item[1]), item[0]))
    return [QueueGroup(reason, len(pods), pods[:chips], max(0, len(pods) - chips),
                       open=len(ordered) == 1 or len(pods) <= chips)
            for reason, pods in ordered]


@dataclass
class ScenarioPage:
    nodes: list[NodeCard]
    queue: list[PodChip]
    groups: list[GroupChip]
    templates: list[str]
    selectors: list[SelectorField]
    diff: dict
    strategy: str
    requests: list[dict] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    hidden: int = 0  # node cards left out (large clusters: see ``page``'s ``limit``)
    node_names: list[str] = field(default_factory=list)
    pod_refs: list[str] = field(default_factory=list)
    queue_groups: list[QueueGroup] = field(default_factory=list)
    match: str = ""  # the canvas's node search: name contains
    group: str = ""  # the canvas's node-group filter
    # what loading the scenario's added objects warned of (a field its gate drops)
    warnings: list[str] = field(default_factory=list)


def _selectors(obj: Any, path: str = "") -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            where = f"{path}.{key}" if path else key
            if key == "selector" and isinstance(value, str):
                found.append((where, value))
            else:
                found += _selectors(value, where)
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            found += _selectors(value, f"{path}[{index}]")
    return found


def _touched(diff: dict) -> set[str]:
    """Nodes the scenario changed something on."""
    nodes = set(diff["nodes_added"])
    nodes |= {p["node"] for p in diff["newly_scheduled"]}
    nodes |= {p["was"] for p in diff["newly_pending"] if p.get("was")}
    nodes |= {p["from"] for p in diff["moved_pods"]} | {p["to"] for p in diff["moved_pods"]}
    for claim in diff["moved_claims"]:
        nodes |= {held.split("/", 1)[0] for held in (*claim["before"], *claim["after"])}
    return nodes


@dataclass
class _Pods:
    """A state's pods that are not terminated, as the page groups them: ``(pod, ref)``
    pairs by node and waiting, and every ref sorted. Never changed once made: a baseline's
    are shared by the pages of all its forks."""

    by_node: dict[str, list[tuple[Any, str]]]
    waiting: list[tuple[Any, str]]
    refs: list[str]


_settled_pods: WeakKeyDictionary[ClusterState, _Pods] = WeakKeyDictionary()
_PALETTE_KINDS = frozenset({"NodeGroup", "PodTemplate", "ResourceClaimParameters",
                            "ResourceClassParameters", "DeviceClass", "ProvisioningRequest"})
"""The kinds the page draws outside the canvas (palette, selectors, requests)."""
_settled_palette: WeakKeyDictionary[ClusterState, list] = WeakKeyDictionary()


def _palette(result: Evaluation) -> list:
    """``result``'s objects of :data:`_PALETTE_KINDS`, in document order.

    A fork's are its baseline's (found once per baseline state) with the objects it changed
    looked at again, as :func:`_pods` groups pods: a drop does not walk every object of a
    large cluster. A test holds it equal to a walk of every object.
    """
    state, base = result.state, result.base
    if base is None:
        return [obj for obj in state.all_objects() if obj.kind in _PALETTE_KINDS]
    keys = _settled_palette.get(base.state)
    if keys is None:
        keys = _settled_palette[base.state] = [
            key for key, obj in base.state.objects.items() if obj.kind in _PALETTE_KINDS]
    objects = state.objects
    return [obj for obj in (objects[k] for k in state.in_order({*keys, *state.changed}))
            if obj.kind in _PALETTE_KINDS]


def _ref(pod: Any) -> str:
    return f"{pod.namespace}/{pod.name}"


def _all_pods(state: ClusterState) -> _Pods:
    by_node: dict[str, list[tuple[Any, str]]] = {}
    waiting: list[tuple[Any, str]] = []
    refs: list[str] = []
    for pod in state.pods():  # in document order; what is drawn is sorted by ``page``
        if pod.terminated:
            continue
        ref = _ref(pod)
        refs.append(ref)
        if pod.node_name:
            by_node.setdefault(pod.node_name, []).append((pod, ref))
        else:
            waiting.append((pod, ref))
    refs.sort()
    return _Pods(by_node, waiting, refs)


def _pods(result: Evaluation) -> _Pods:
    """``result``'s pods grouped for the page.

    A scenario evaluated on a fork of the settled baseline differs from it only in the
    objects its state changed (``Evaluation.base``, ``ClusterState.changed``), and shares
    every other object with it. So the baseline's grouping is made once per baseline state
    and a fork's is that with the pods it changed taken out and put in again: a drop on a
    cluster of 40,000 pods costs what it changed (docs/scenarios.md, "Evaluation, diff and
    undo"). A test holds it equal to a grouping made afresh.
    """
    state, base = result.state, result.base
    if base is None:
        return _all_pods(state)
    settled = _settled_pods.get(base.state)
    if settled is None:
        settled = _settled_pods[base.state] = _all_pods(base.state)
    keys = [key for key in state.changed if key.kind == "Pod"]
    if not keys:
        return settled
    removed = [p for p in (base.state.objects.get(k) for k in keys)
               if p is not None and not p.terminated]
    added = [p for p in (state.objects.get(k) for k in keys)
             if p is not None and not p.terminated]
    dropped = {id(p) for p in removed}  # the baseline's own objects, as its lists hold them
    by_node = dict(settled.by_node)
    for node in {p.node_name for p in (*removed, *added) if p.node_name}:
        by_node[node] = [e for e in settled.by_node.get(node, ()) if id(e[0]) not in dropped]
        by_node[node] += [(p, _ref(p)) for p in added if p.node_name == node]
        if not by_node[node]:
            del by_node[node]
    waiting = [e for e in settled.waiting if id(e[0]) not in dropped]
    waiting += [(p, _ref(p)) for p in added if not p.node_name]
    gone = {_ref(p) for p in removed}
    back = {_ref(p) for p in added}
    if gone == back:
        # the same pods, moved or pinned (most drops): the baseline's very list, whose
        # options the page has drawn already (``scenario_tags.options``)
        return _Pods(by_node, waiting, settled.refs)
    refs = [r for r in settled.refs if r not in gone]
    for ref in back:
        insort(refs, ref)
    return _Pods(by_node, waiting, refs)


def _by_name(entry: tuple[Any, str]) -> tuple[str, str]:
    """A ``(pod, ref)`` pair's place in the page: by namespace, then name."""
    pod = entry[0]
    return pod.namespace or "", pod.name


def page(result: Evaluation, limit: int = 60, match: str = "",
         group: str = "") -> ScenarioPage:
    """Everything the scenario page draws.

    A person cannot look at hundreds of node cards at once, and rendering them all would
    make every drop slow on a large cluster: the canvas shows the nodes the scenario
    touched, then the others in name order, at most ``limit`` (``match`` filters by
    name, ``group`` by node group); every node stays reachable through the Move forms. The
    queue is grouped by pending reason (:func:`queue_groups`). The cards are drawn in name
    order, so a change never reorders them under the pointer; pods within a card and in the
    queue by namespace/name.
    """
    state = result.state
    diff = result.diff.to_dict()
    newly = {p["pod"] for p in diff["newly_scheduled"]} | {p["pod"] for p in
                                                          diff["newly_pending"]}

    def chip(pod: Any, ref: str) -> PodChip:
        return PodChip(ref, pod.node_name, pinned_node(pod.raw) is not None, new=ref in newly,
                       state=pod_state(pod))

    # Every pod is offered to the Move forms; chips are made only for those drawn (the
    # queue's and the shown nodes'), not for thousands of pods on nodes left out.
    pods = _pods(result)
    by_node = pods.by_node
    queue: list[PodChip] = []
    for pod, ref in sorted(pods.waiting, key=_by_name):
        pending = chip(pod, ref)
        pending.reason = pending_reason(pod)
        queue.append(pending)
    added = set(diff["nodes_added"])
    touched = _touched(diff)
    names = [n for n in state.node_order if match in n] if match else list(state.node_order)
    if group:
        names = [n for n in names
                 if state.nodes[n].meta.labels.get(NODE_GROUP_LABEL) == group]
    shown = sorted(names, key=lambda n: n not in touched)[:limit]
    order = {n: i for i, n in enumerate(state.node_order)}  # by name (ClusterState)
    shown.sort(key=order.__getitem__)
    devices = node_devices(state, shown)
    nodes = [NodeCard(name, state.nodes[name].meta.labels.get(NODE_GROUP_LABEL), name in added,
                      [chip(*entry) for entry in sorted(by_node.get(name, ()), key=_by_name)],
                      devices[name])
             for name in shown]
    members = group_nodes(state)
    groups, templates, selectors, requests = [], [], [], []
    for obj in _palette(result):
        if obj.kind == "NodeGroup":
            spec = obj.raw.get("spec") or {}
            groups.append(GroupChip(obj.name, len(members.get(obj.name, ())),
                                    int(spec.get("maxSize") or 0)))
        elif obj.kind == "PodTemplate":
            templates.append(f"{obj.namespace}/{obj.name}")
        elif obj.kind in ("ResourceClaimParameters", "ResourceClassParameters"):
            ref = f"{obj.namespace}/{obj.name}" if obj.namespace else obj.name
            selectors += [SelectorField(obj.kind, ref, path, expression)
                          for path, expression in _selectors(obj.raw)]
        elif obj.kind == "DeviceClass":  # resource.k8s.io/v1: CEL under spec.selectors
            selectors += [SelectorField(obj.kind, obj.name,
                                        f"spec.selectors[{i}].cel.expression", expression)
                          for i, expression in enumerate(obj.selectors)]
        elif obj.kind == "ProvisioningRequest":
            status = obj.to_manifest().get("status") or {}
            requests.append({"ref": f"{obj.namespace}/{obj.name}",
                             "conditions": status.get("conditions") or []})
    return ScenarioPage(nodes, queue, groups, templates, selectors, diff,
                        result.applied.strategy, requests, diff["nodes_removed"],
                        hidden=len(names) - len(shown),
                        # a state's node_order is replaced, never changed (ClusterState),
                        # so its forks share it with the baseline, and so do their pages
                        node_names=state.node_order, pod_refs=pods.refs,
                        queue_groups=queue_groups(queue), match=match, group=group,
                        warnings=result.warnings)


def describe_change(change: dict) -> str:
    """One line for a person (the operation's own words; a change no operation reads, as
    stored by an older version, by its op)."""
    try:
        return read(change).describe()
    except ChangeError:
        return str(change.get("op") if isinstance(change, dict) else change)
