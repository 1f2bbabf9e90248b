"""The pools of one simulated driver: which nodes each reaches and what its claims hold.

A pool is ``count`` identical, network-attached resources reachable from the nodes its label
selector matches (no selector: every node). An allocation takes ``requestCount`` resources
from one pool and is available on the nodes that pool reaches (``availableOnNodes``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import NamedTuple

from allocation.engine.labels import label_selector_matches, node_selector_matches
from allocation.engine.objects import DriverSimulation, Node, ResourceClaim

__all__ = ["Pool", "PoolBook", "Holding", "node_selector_of", "available_on"]


def node_selector_of(selector: dict | None) -> dict | None:
    """A label selector as the equivalent core NodeSelector (None when it matches all nodes)."""
    if not selector:
        return None
    requirements = [{"key": key, "operator": "In", "values": [value]}
                    for key, value in sorted((selector.get("matchLabels") or {}).items())]
    requirements += [copy.deepcopy(expr) for expr in selector.get("matchExpressions") or ()]
    if not requirements:
        return None
    return {"nodeSelectorTerms": [{"matchExpressions": requirements}]}


def available_on(claim: ResourceClaim, node: Node) -> bool:
    """Whether the claim's allocation can be used on ``node``."""
    return claim.allocation is not None and claim.allocation.usable_on(node)


@dataclass(slots=True)
class Pool:
    """One pool of a DriverSimulation and the nodes it reaches right now."""

    name: str
    count: int
    available_on_nodes: dict | None
    nodes: frozenset[str]
    used: int = 0

    @property
    def free(self) -> int:
        return self.count - self.used


class Holding(NamedTuple):
    """What one claim holds: ``count`` resources of ``pool``."""

    pool: Pool
    count: int


@dataclass
class PoolBook:
    """What one DriverSimulation's claims hold, by pool; rebuilt every pass."""

    sim: DriverSimulation
    pools: list[Pool]
    by_node: dict[str, list[Pool]]
    held: dict[str, Holding] = field(default_factory=dict)

    @classmethod
    def build(cls, sim: DriverSimulation, nodes: dict[str, Node]) -> PoolBook:
        pools = []
        by_node: dict[str, list[Pool]] = {name: [] for name in nodes}
        for entry in sim.pools:
            selector = entry.get("nodeSelector")
            reach = frozenset(name for name, node in nodes.items()
                              if label_selector_matches(selector, node.meta.labels))
            pool = Pool(entry["name"], int(entry.get("count") or 0), node_selector_of(selector),
                        reach)
            pools.append(pool)
            for name in sorted(reach):
                by_node[name].append(pool)
        return cls(sim, pools, by_node)

    def pool(self, name: str) -> Pool | None:
        return next((p for p in self.pools if p.name == name), None)

    def for_node(self, node: str, count: int) -> Pool | None:
        """The first pool, in document order, that reaches ``node`` with ``count`` free."""
        return next((p for p in self.by_node.get(node, ()) if p.free >= count), None)

    def for_immediate(self, count: int, suitable: dict | None, nodes: dict[str, Node]
                      ) -> Pool | None:
        """The first pool with ``count`` free that reaches a node the class finds suitable."""
        for pool in self.pools:
            if pool.free < count:
                continue
            if suitable and not any(node_selector_matches(suitable, nodes[n])
                                    for n in sorted(pool.nodes)):
                continue
            return pool
        return None

    def take(self, claim_ref: str, pool: Pool, count: int) -> None:
        self.held[claim_ref] = Holding(pool, count)
        pool.used += count

    def release(self, claim_ref: str) -> None:
        held = self.held.pop(claim_ref, None)
        if held is not None:
            held.pool.used -= held.count

    def attribute(self, claim: ResourceClaim, count: int, nodes: dict[str, Node]) -> Pool | None:
        """The pool an allocation read from the input holds: the one whose reach it names,
        else the first reaching a node it is available on (the planner cannot know more)."""
        wanted = claim.allocation.available_on_nodes if claim.allocation else None
        same = next((p for p in self.pools if p.available_on_nodes == wanted), None)
        if same is not None:
            return same
        for pool in self.pools:
            if any(available_on(claim, nodes[n]) for n in sorted(pool.nodes)):
                return pool
        return None

    def summary(self) -> str:
        """``pool-a 3/4 free, pool-b 0/2 free``: for failure messages."""
        return ", ".join(f"{p.name} {p.free}/{p.count} free" for p in self.pools) or "no pools"
