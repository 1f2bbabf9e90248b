"""The numeric ``counter`` model (KEP-4381 numeric parameters, seed 000).

Nodes publish NodeResourceCapacity instances of ``apiVersion``
``counter.dra.config.k8s.io/v1alpha1`` (or ``/v1beta1``), ``kind: Capacity`` with
``data: {metadata: {labels}, count}``. A ResourceClass with ``numericParameters`` names, per
vendor claim parameter type, a ``celTemplate``: YAML in which each ``{{ expression }}`` is CEL
evaluated with ``object`` bound to the claim's vendor parameters object. The expansion decodes
into the counter Parameters type ``{required, selector}`` (``Required``/``Selector`` too): the
claim takes ``required`` units from one instance whose labels match ``selector`` and that has
that many units left.

Candidate order: ``first-fit`` takes instances in document order, ``best-fit`` the instance
with the fewest units left that still fits (then document order).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from allocation.engine.constants import COUNTER_API_VERSIONS, COUNTER_GROUP
from allocation.engine.labels import label_selector_matches
from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.schema import Int, ListOf, MapOf, Obj, Str, join
from allocation.engine.models.base import (
    Candidate,
    Inventory,
    Owner,
    Refusal,
    Request,
    Strategy,
    StructuredModel,
)
from allocation.engine.models.counter_template import Demand
from allocation.engine.models.numeric import plan_numeric

if TYPE_CHECKING:
    from allocation.engine.objects import ResourceClaim, ResourceClass
    from allocation.engine.resolve import ClaimPlan
    from allocation.engine.state import ClusterState

__all__ = ["CounterModel", "CounterInventory"]


_capacity_data = Obj({
    "apiVersion": Str(), "kind": Str(),
    "metadata": Obj({"name": Str(), "labels": MapOf(Str()), "annotations": MapOf(Str())}),
    "count": Int(minimum=0), "Count": Int(minimum=0),
}, one_of=(("count", "Count"),))



@dataclass(slots=True)
class _Instance:
    id: str
    order: int
    labels: dict
    count: int


# -- inventory ---------------------------------------------------------------------------
class CounterInventory(Inventory):
    """Counter instances of one driver on one node and the units each claim holds."""

    def __init__(self, model: CounterModel, node_name: str, driver_name: str,
                 instances: list[_Instance]) -> None:
        self.model = model
        self.node_name = node_name
        self.driver_name = driver_name
        self.instances = instances
        self.by_id = {i.id: i for i in instances}
        self.left = {i.id: i.count for i in instances}
        self.held: dict[str, dict[Owner, int]] = {}

    def _holders(self, ident: str) -> str:
        held = self.held.get(ident) or {}
        return ", ".join(f"{n} to claim {o}" for o, n in sorted(held.items()))

    def candidates(self, request: Request, strategy: str,
                   refusals: list[Refusal] | None = None) -> Iterator[Candidate]:
        demand: Demand = request.payload
        fitting = []
        for instance in self.instances:
            if demand.selector and not label_selector_matches(demand.selector,
                                                              instance.labels):
                if refusals is not None:
                    refusals.append(Refusal(instance.id, "labels "
                                            f"{json.dumps(instance.labels, sort_keys=True)} "
                                            "do not match the selector"))
                continue
            left = self.left[instance.id]
            if left < demand.required:
                if refusals is not None:
                    held = self._holders(instance.id)
                    refusals.append(Refusal(instance.id, f"not enough units left: {left} of "
                                            f"{instance.count}, needs {demand.required}"
                                            + (f" ({held})" if held else "")))
                continue
            if strategy != Strategy.BEST_FIT:
                if self.left[instance.id] >= demand.required:
                    yield Candidate(instance.id, instance.order, instance.labels,
                                    demand.required)
                continue
            fitting.append((left, instance.order, instance))
        fitting.sort(key=lambda item: item[:2])
        for _left, _order, instance in fitting:
            if self.left[instance.id] >= demand.required:  # the search may have taken some
                yield Candidate(instance.id, instance.order, instance.labels, demand.required)

    def clone(self) -> CounterInventory:
        twin = copy.copy(self)
        twin.left = dict(self.left)
        twin.held = {ident: dict(owners) for ident, owners in self.held.items()}
        return twin

    def take(self, candidate: Candidate, owner: Owner) -> None:
        instance = self.by_id.get(candidate.id)
        if instance is None:
            raise ValueError(f"no counter instance {candidate.id!r}")
        left = self.left[candidate.id]
        if candidate.amount > left:
            held = self._holders(candidate.id)
            raise ValueError(f"counter instance {candidate.id} has {left} of {instance.count} "
                             f"unit(s) left, not enough for {candidate.amount}"
                             + (f" ({held})" if held else ""))
        self.left[candidate.id] = left - candidate.amount
        owners = self.held.setdefault(candidate.id, {})
        owners[owner] = owners.get(owner, 0) + candidate.amount

    def release(self, candidate: Candidate, owner: Owner) -> None:
        owners = self.held.get(candidate.id)
        if not owners or owner not in owners:
            return
        amount = min(candidate.amount, owners[owner])
        owners[owner] -= amount
        if owners[owner] == 0:
            del owners[owner]
        if not owners:
            del self.held[candidate.id]
        self.left[candidate.id] += amount

    def resolve(self, item: dict) -> Candidate | str:
        instance = self.by_id.get(str(item.get("id")))
        if instance is None:
            return (f"no counter instance {item.get('id')!r} of driver {self.driver_name} on "
                    f"node {self.node_name}")
        count = item.get("count")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            return f"count must be a positive integer, not {count!r}"
        return Candidate(instance.id, instance.order, instance.labels, count)

    def usage(self) -> dict[str, int]:
        total = sum(i.count for i in self.instances)
        return {"total": total, "allocated": total - sum(self.left.values()),
                "instances": len(self.instances)}


def _flatten(published: Any) -> Iterator[dict]:
    """Instances from ``published``: capacity ``instances`` lists, possibly grouped in lists."""
    for item in published or ():
        if isinstance(item, dict):
            yield item
        elif isinstance(item, list | tuple):
            yield from _flatten(item)


# -- the model ---------------------------------------------------------------------------
class CounterModel(StructuredModel):
    """Units counted down on NodeResourceCapacity instances, asked for through templates."""

    name = "counter"
    finalizer = "numeric.dra.k8s.io/delete-protection"
    source = "capacity"
    plans_numeric = True
    result_schema = Obj({"instances": ListOf(Obj({"id": Str(allow_empty=False),
                                                  "count": Int(minimum=1)},
                                                 required=("id", "count")))},
                        required=("instances",))

    def check_capacity(self, instances: Any, path: str, problems: ProblemList) -> None:
        """Every counter instance's ``data`` is a Capacity with a non-negative integer count."""
        for index, instance in enumerate(instances or ()):
            if not isinstance(instance, dict):
                continue
            here = join(path, index)
            api_version, kind = instance.get("apiVersion"), instance.get("kind")
            if not isinstance(api_version, str) or not api_version.startswith(
                    f"{COUNTER_GROUP}/"):
                continue  # another numeric model's instance
            if api_version not in COUNTER_API_VERSIONS:
                problems.add(join(here, "apiVersion"), f"unsupported counter version "
                             f"{api_version!r}: use {' or '.join(COUNTER_API_VERSIONS)}")
                continue
            if kind != "Capacity":
                problems.add(join(here, "kind"), f"the counter model publishes kind Capacity, "
                             f"not {kind!r}")
                continue
            _capacity_data.check(instance.get("data"), join(here, "data"), problems)

    def build_inventory(self, node_name: str, driver_name: str,
                        published: Sequence[Any]) -> CounterInventory:
        instances: list[_Instance] = []
        seen: set[str] = set()
        for entry in _flatten(published):
            if (entry.get("apiVersion") not in COUNTER_API_VERSIONS
                    or entry.get("kind") != "Capacity" or entry["id"] in seen):
                continue
            data = entry.get("data") or {}
            count = data.get("count", data.get("Count", 0))
            labels = dict(((data.get("metadata") or {}).get("labels")) or {})
            seen.add(entry["id"])
            instances.append(_Instance(entry["id"], len(instances), labels, int(count)))
        return CounterInventory(self, node_name, driver_name, instances)

    def encode_result(self, picks: Sequence[Candidate]) -> dict:
        return {"instances": [{"id": c.id, "count": c.amount} for c in picks]}

    def plan_numeric(self, state: ClusterState, claim: ResourceClaim, rc: ResourceClass,
                     plan: ClaimPlan) -> ClaimPlan:
        """Fill ``plan`` for a claim of a ``numericParameters`` class (never raises)."""
        return plan_numeric(self, state, claim, rc, plan)
