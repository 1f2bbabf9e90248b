"""The interface every structured model implements, and the request type the allocator uses.

A *structured model* (KEP-4381) describes how a driver publishes node-local resources and how
a claim asks for them. The allocator knows nothing about any model: it asks the model's
:class:`Inventory` for one node and driver to list candidates for a request, to take one and
to give it back, and asks the model to encode the chosen candidates into the claim's result.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.schema import Schema

if TYPE_CHECKING:
    from allocation.engine.objects import ResourceClaim, ResourceClass
    from allocation.engine.resolve import ClaimPlan
    from allocation.engine.state import ClusterState

__all__ = ["StructuredModel", "Inventory", "Candidate", "Request", "Refusal", "Owner", "Strategy",
           "HELD"]

class Strategy(StrEnum):
    """The order in which inventories offer candidates (``docs/models.md``)."""

    FIRST_FIT = "first-fit"
    """Document order."""
    BEST_FIT = "best-fit"
    """The candidate that leaves the least unused first (per model)."""


Owner = str
"""Who holds a candidate: the claim's ``namespace/name``."""

HELD = "allocated to claim "
"""How a refusal says a candidate is held: ``allocated to claim <owner>`` (the explanation's
"in use" group, which ``scheduling/diagnosis.py`` tells from the others)."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why one candidate was refused for one request, for the explanation."""

    candidate: str
    reason: str


@dataclass(slots=True)
class Request:
    """One resource asked for by one claim, compiled for one driver and model.

    ``selectors`` are the request's own selector followed by the class filters for the same
    driver and model; all must be true. ``payload`` is model-specific (a counter's units and
    label selector, say). ``key`` identifies interchangeable requests, so the search never
    tries the same set of candidates in another order.
    """

    driver_name: str
    model: StructuredModel
    selectors: tuple = ()
    payload: Any = None
    label: str = ""
    key: tuple = ()
    sources: tuple = ()


@dataclass(slots=True)
class Candidate:
    """Something a request may take on one node: a device, a partition leaf, an instance."""

    id: str
    order: int
    data: Any = None
    amount: int = 1


class Inventory(ABC):
    """What one driver offers on one node through one model, and what is taken of it."""

    model: StructuredModel
    node_name: str
    driver_name: str

    @abstractmethod
    def candidates(self, request: Request, strategy: str,
                   refusals: list[Refusal] | None = None) -> Iterator[Candidate]:
        """Free candidates that satisfy ``request``, in the strategy's order.

        When ``refusals`` is a list, every refused candidate is appended with its reason.
        """

    @abstractmethod
    def take(self, candidate: Candidate, owner: Owner) -> None:
        """Mark ``candidate`` as used by ``owner``."""

    @abstractmethod
    def release(self, candidate: Candidate, owner: Owner) -> None:
        """Undo :meth:`take`."""

    @abstractmethod
    def resolve(self, item: dict) -> Candidate | str:
        """The candidate an allocation result item names, or why it names none."""

    def clone(self) -> Inventory:
        """A copy that shares what the node publishes and owns a copy of what is taken.

        Forks of a cluster state (``ClusterState.fork``) clone an inventory before taking
        from it. This default deep-copies everything but the model; built-in models
        override it to copy only their holdings.
        """
        return copy.deepcopy(self, {id(self.model): self.model})

    def usage(self) -> dict[str, int]:
        """``{"total": n, "allocated": m}`` for dashboards; models may add more."""
        return {"total": 0, "allocated": 0}


class StructuredModel(ABC):
    """A structured model: schemas for its API fields and the logic to allocate with them.

    ``name`` is the field name it uses in slices, requests, filters and results.
    ``source`` is ``"slice"`` for models published in NodeResourceSlice ``spec.<name>`` and
    ``"capacity"`` for models published as NodeResourceCapacity instances.
    """

    name: str = ""
    finalizer: str = ""
    source: str = "slice"
    slice_schema: Schema | None = None
    request_schema: Schema | None = None
    filter_schema: Schema | None = None
    result_schema: Schema | None = None

    plans_numeric: bool = False
    """Whether :meth:`plan_numeric` plans claims of ``numericParameters`` classes."""

    def check_slice(self, value: Any, path: str, problems: ProblemList) -> None:
        """Checks beyond the schema (references between entries, say); none by default."""
        return None

    def check_capacity(self, instances: Any, path: str, problems: ProblemList) -> None:
        """Checks of NodeResourceCapacity (and NodeGroup) ``instances`` for a capacity model;
        none by default. Runs on broken documents too, so it must tolerate any input."""
        return None

    def plan_numeric(self, state: ClusterState, claim: ResourceClaim, rc: ResourceClass,
                     plan: ClaimPlan) -> ClaimPlan:
        """``plan`` filled for a claim of a ``numericParameters`` class, or with
        ``plan.error`` (never raises); only for models with ``plans_numeric``."""
        raise NotImplementedError(f"{self.name} does not plan numericParameters classes")

    @abstractmethod
    def build_inventory(self, node_name: str, driver_name: str,
                        published: Sequence[Any]) -> Inventory:
        """An inventory from the model's parts of every slice or capacity of one node+driver."""

    def compile_requests(self, driver_name: str, value: Any, filters: Sequence[Any],
                         label: str) -> list[Request]:
        """The requests one ``requests[]`` entry of ResourceClaimParameters asks for."""
        raise NotImplementedError(f"{self.name} has no ResourceClaimParameters requests")

    @abstractmethod
    def encode_result(self, picks: Sequence[Candidate]) -> dict:
        """The ``structuredData.<name>`` value for the candidates chosen on one node+driver."""

    def result_items(self, value: dict) -> list[dict]:
        """The items of a ``structuredData.<name>`` value, each resolvable by an inventory."""
        return list(value.get("resources") or value.get("instances") or [])


