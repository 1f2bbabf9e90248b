"""Allocating the pending claims of one pod on one node: a backtracking search.

Requests are tried in order (claims of the pod in order, requests of each claim in order),
candidates in the strategy's order. When a later request cannot be met the search backtracks,
so a placement is found whenever one exists (within a step budget that keeps pathological
inputs from hanging the engine). Interchangeable requests only ever take candidates in
increasing order, so the same set is never tried twice in another order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from allocation.engine.models import Candidate, Inventory, Refusal, Request, Strategy

__all__ = ["Want", "search", "explain_node", "SEARCH_BUDGET", "STRATEGIES"]

SEARCH_BUDGET = 20_000
STRATEGIES = tuple(Strategy)
"""Every strategy's name, for command-line choices and checks."""


@dataclass(slots=True)
class Want:
    """One request of one claim: who would own what it takes, and the request."""

    owner: str
    request: Request


@dataclass(slots=True)
class _Search:
    inventories: dict
    node: str
    wants: list[Want]
    strategy: str
    budget: int
    steps: int = 0
    chosen: list[tuple[Inventory, Candidate]] = field(default_factory=list)
    exhausted: bool = False

    def run(self, index: int) -> bool:
        if index == len(self.wants):
            return True
        want = self.wants[index]
        request = want.request
        inventory = self.inventories.get((self.node, request.driver_name, request.model.name))
        if inventory is None:
            return False
        floor = -1
        if index and self.wants[index - 1].request.key == request.key:
            previous_inventory, previous = self.chosen[index - 1]
            if previous_inventory is inventory:
                floor = previous.order
        for candidate in inventory.candidates(request, self.strategy):
            if candidate.order < floor:
                continue
            self.steps += 1
            if self.steps > self.budget:
                self.exhausted = True
                return False
            inventory.take(candidate, want.owner)
            self.chosen.append((inventory, candidate))
            if self.run(index + 1):
                return True
            self.chosen.pop()
            inventory.release(candidate, want.owner)
            if self.exhausted:
                return False
        return False


def search(inventories: dict, node: str, wants: list[Want], strategy: str = Strategy.FIRST_FIT,
           budget: int = SEARCH_BUDGET) -> tuple[list[tuple[Inventory, Candidate]] | None, bool]:
    """Take candidates for every want on ``node``; ``(picks, exhausted)``.

    On success the picks stay taken (the caller records them in the claims); on failure
    nothing stays taken. ``exhausted`` tells that the step budget, not the node, said no.
    """
    if len(wants) == 1:
        return _search_one(inventories, node, wants[0], strategy, budget)
    state = _Search(inventories, node, wants, strategy, budget)
    if state.run(0):
        return state.chosen, False
    return None, state.exhausted


def _search_one(inventories: dict, node: str, want: Want, strategy: str, budget: int
                ) -> tuple[list[tuple[Inventory, Candidate]] | None, bool]:
    """:func:`search` of one want, as ``_Search`` would run it without its bookkeeping: the
    first candidate is taken (one step of the budget), there is nothing to backtrack.
    A pod with one claim of one request (the common pod) asks this on each node tried."""
    request = want.request
    inventory = inventories.get((node, request.driver_name, request.model.name))
    if inventory is None:
        return None, False
    for candidate in inventory.candidates(request, strategy):
        if budget < 1:
            return None, True
        inventory.take(candidate, want.owner)
        return [(inventory, candidate)], False
    return None, False


def explain_node(inventories: dict, node: str, wants: list[Want],
                 strategy: str = Strategy.FIRST_FIT) -> list[dict]:
    """Per request: its selectors, the candidates that would match, and why others do not."""
    out = []
    for want in wants:
        request = want.request
        entry: dict = {"claim": want.owner, "request": request.label,
                       "driver": request.driver_name, "selectors": list(request.sources)}
        inventory = inventories.get((node, request.driver_name, request.model.name))
        if inventory is None:
            entry["problem"] = (f"node publishes no {request.model.name} resources of driver "
                                f"{request.driver_name}")
        else:
            refusals: list[Refusal] = []
            matching = [c.id for c in inventory.candidates(request, strategy, refusals)]
            entry["matching"] = matching
            grouped: dict[str, list[str]] = {}
            for refusal in refusals:
                grouped.setdefault(refusal.reason, []).append(refusal.candidate)
            entry["refused"] = [{"reason": r, "candidates": ids} for r, ids in grouped.items()]
        out.append(entry)
    return out
