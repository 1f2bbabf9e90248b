"""What-if suggestions for a pending pod, each verified on a snapshot: a node group whose
new node would take the pod, a claim whose devices, freed, would let it fit a near node
(docs/console-pages.md, "Pod").

The explain annotation's suggestions are read off the diagnosis (``scheduling/diagnosis.py``);
these need a simulation each (a node added, pods evicted), so the pod page asks for them
on demand, for the nodes nearest to fitting. Each is an :class:`AutoscalerSimulation`
(``plugin.py``), so what it says is what the scheduler would do; nothing is written back.
Words: ``scheduling/diagnosis_text.suggestion_text``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from allocation.engine.autoscaler.nodegroups import blueprints, group_size
from allocation.engine.autoscaler.plugin import AutoscalerSimulation
from allocation.engine.autoscaler.scaleup import add_group_nodes
from allocation.engine.objects import ResourceClaimV1
from allocation.engine.v1.results import allocated_node_name

if TYPE_CHECKING:
    from allocation.engine.objects import Pod
    from allocation.engine.state import ClusterState

__all__ = ["MAX_TRIALS", "what_if"]

MAX_TRIALS = 8
"""Claims tried for ``freeClaim`` suggestions, at most (each is a simulation)."""


def what_if(state: ClusterState, pod: Pod, nodes: list[str], strategy: str = "first-fit"
            ) -> list[dict]:
    """The suggestions that hold for ``pod``: ``{"kind": "nodeGroup", "group",
    "atMaxSize", "maxSize"}`` for each node group whose new node would take it, and
    ``{"kind": "freeClaim", "claim", "node", "pods"}`` for each claim allocated on one of
    ``nodes`` (the nearest first) whose pods' eviction would let it fit there.

    Returns:
        The suggestions, node groups first; empty when none holds.
    """
    base = AutoscalerSimulation(state, strategy)
    out: list[dict] = []
    for blueprint in blueprints(state):
        if blueprint.problem:
            continue
        trial = base.fork()
        [name] = add_group_nodes(trial, blueprint, 1)
        if trial.fits(pod, name).ok:
            size, most = group_size(state, blueprint.name), blueprint.group.max_size
            out.append({"kind": "nodeGroup", "group": blueprint.name,
                        "atMaxSize": size >= most, "maxSize": most})
    trials = MAX_TRIALS
    for node in nodes:
        for claim, holders in _claims_on(state, pod, node):
            if not trials:
                return out
            trials -= 1
            trial = base.fork()
            if all(trial.evict_pod(p, claim.namespace).ok for p in holders) \
                    and trial.fits(pod, node).ok:
                out.append({"kind": "freeClaim", "claim": claim.ref, "node": node,
                            "pods": [f"{claim.namespace}/{p}" for p in holders]})
    return out


def _claims_on(state: ClusterState, pod: Pod, node: str) -> list[tuple]:
    """The claims allocated on ``node`` that only other pods use, with those pods, in
    name order."""
    found = []
    for claim in [*state.claims(), *state.of_kind(ResourceClaimV1)]:
        allocation = claim.allocation
        if allocation is None:
            continue
        where = (allocated_node_name(allocation) if isinstance(claim, ResourceClaimV1)
                 else allocation.node_name)
        holders = sorted(r["name"] for r in claim.reserved_for if r.get("resource") == "pods")
        mine = claim.namespace == pod.namespace and pod.name in holders
        if where == node and holders and not mine:
            found.append((claim, holders))
    return sorted(found, key=lambda pair: pair[0].ref)
